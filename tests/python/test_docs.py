"""The README and docs/ cannot rot: what they name exists, their links resolve, and the CLI
reference is what the commands' own definitions print. No Spark.

Checked in README.md, CONTRIBUTING.md, CHANGELOG.md and every page under docs/ (docs/cli.md is
generated, and compared whole with what its generator writes):
- every link to a file of the project resolves, and so does its #anchor (a heading of the page);
- every project path named in code (`models/...`, `scripts/...`; `<placeholders>` as wildcards);
- every command: `make` targets in the Makefile, console scripts, `python scripts/X.py` and
  `python -m module`, dbt subcommands and the macros `dbt run-operation` runs;
- every `--flag` given to one of them is one that command takes (the project's from their
  argparse help, dbt's from its click definitions); a flag named alone is one some command takes.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from cdc_ops.cli_reference import COMMANDS, command_help, reference
from cdc_testkit.harness import PROJECT_ROOT

PAGES = sorted(
    [PROJECT_ROOT / name for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md")]
    + list((PROJECT_ROOT / "docs").rglob("*.md"))
)
GENERATED = PROJECT_ROOT / "docs" / "cli.md"
# the pages the README's map and docs/README.md promise
EXPECTED_PAGES = (
    "getting-started",
    "loading",
    "running",
    "targets",
    "operations",
    "formats",
    "typed-tables",
    "concepts",
    "troubleshooting",
    "benchmarks",
    "upgrading",
    "cli",
)
ROOT_FILES = {path.name for path in PROJECT_ROOT.iterdir() if path.is_file()}
# top-level folders of the project: a code span starting with one of them is a path to check
TOP_FOLDERS = {"models", "macros", "seeds", "tests", "scripts", "src", "docs", "integration_tests", "profiles"}
TOP_FOLDERS |= {"schemas", "sample_data"}
SHELL_LANGUAGES = {"sh", "bash", "shell", "ini"}  # a block without a language: a diagram or output
SEPARATORS = {"&&", "||", ";", "|"}


@dataclass(frozen=True)
class Code:
    page: Path
    text: str
    shell: bool  # a command line (shell block or inline span), not output


def relative(page: Path) -> str:
    return str(page.relative_to(PROJECT_ROOT))


def split_page(text: str) -> tuple[list[tuple[str, str]], str]:
    """The fenced code blocks (language, text) and the prose around them."""
    blocks, prose, current, language = [], [], None, ""
    for line in text.splitlines():
        if line.lstrip().startswith("```"):  # a fence, also indented in a list item
            if current is None:
                current, language = [], line.lstrip()[3:].strip()
            else:
                blocks.append((language, "\n".join(current)))
                current = None
            continue
        (prose if current is None else current).append(line)
    return blocks, "\n".join(prose)


def code_of(page: Path) -> Iterator[Code]:
    """Every command-bearing piece of code of a page: shell lines (continuations joined) and
    inline code spans."""
    blocks, prose = split_page(page.read_text())
    for language, text in blocks:
        for line in text.replace("\\\n", " ").splitlines():
            yield Code(page, line, language in SHELL_LANGUAGES)
    for span in re.findall(r"`([^`]+)`", prose):  # a span may wrap onto the next line
        yield Code(page, " ".join(span.split()), True)


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings."""
    found = set()
    for line in split_page(page.read_text())[1].splitlines():
        if match := re.match(r"#{1,6} (.+)", line):
            heading = re.sub(r"[`*]", "", match.group(1)).strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", heading).replace(" ", "-"))
    return found


def test_readme_is_a_short_guide() -> None:
    readme = (PROJECT_ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    first_screen = "\n".join(readme.splitlines()[:60])
    for needed in ("make demo", "make test", "--format", "cdc_history", "cdc_current", "dataworks_json"):
        assert needed in first_screen, f"{needed} is not on the README's first screen"


@pytest.mark.parametrize("name", EXPECTED_PAGES)
def test_every_page_exists_and_is_on_the_map(name: str) -> None:
    assert (PROJECT_ROOT / "docs" / f"{name}.md").is_file()
    assert f"({name}.md)" in (PROJECT_ROOT / "docs" / "README.md").read_text()
    assert f"(docs/{name}.md)" in (PROJECT_ROOT / "README.md").read_text()


def test_no_dates_or_commit_hashes() -> None:
    """The pages are a guide, not a lab notebook: no dates or commit hashes in their prose (a
    timestamp in an example command is code)."""
    for page in PAGES:
        prose = split_page(page.read_text())[1]
        prose = re.sub(r"`[^`\n]+`", "", prose)
        assert not re.findall(r"\b(?:19|20)\d\d-\d\d-\d\d\b", prose), relative(page)
        hashes = [
            word
            for word in re.findall(r"\b[0-9a-f]{7,40}\b", page.read_text())
            if re.search(r"\d", word) and re.search(r"[a-f]", word)
        ]
        assert not hashes, f"{relative(page)}: {hashes}"


def test_links_resolve() -> None:
    broken = []
    for page in PAGES:
        prose = split_page(page.read_text())[1]
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z]+:", target):  # http(s), mailto: outside the project
                continue
            path_text, _, anchor = target.partition("#")
            path = (page.parent / path_text).resolve() if path_text else page
            if not path.exists():
                broken.append(f"{relative(page)}: {target} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                broken.append(f"{relative(page)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_named_paths_exist() -> None:
    missing = []
    for code in (code for page in PAGES if page != GENERATED for code in code_of(page)):
        for token in re.split(r"[\s,;()'\"=]+", code.text):
            token = token.rstrip(".:")
            first = token.split("/", 1)[0]
            if not ((first in TOP_FOLDERS and "/" in token) or token in ROOT_FILES):
                continue
            pattern = re.sub(r"<[^>]+>", "*", token).rstrip("/")
            if not any(PROJECT_ROOT.glob(pattern)) and not (PROJECT_ROOT / pattern).exists():
                missing.append(f"{relative(code.page)}: {token}")
    assert not missing, "\n".join(missing)


@cache
def make_targets() -> set[str]:
    return set(re.findall(r"^([\w.-]+):", (PROJECT_ROOT / "Makefile").read_text(), re.MULTILINE))


@cache
def console_scripts() -> set[str]:
    return set(tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]["scripts"])


@cache
def project_flags(module: str) -> set[str]:
    """The --flags of a project command, from its own --help."""
    command = next(command for command, name, _ in COMMANDS if name == module)
    return set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", command_help(command, module)))


@cache
def dbt_flags(words: tuple[str, ...]) -> set[str] | None:
    """The flags of a dbt (sub)command, from dbt's click definitions; None: no such command."""
    from dbt.cli.main import cli

    command = cli
    for word in words:
        if not hasattr(command, "commands") or word not in command.commands:
            break
        command = command.commands[word]
    if command is cli:
        return None
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)} | {"--help"}


@cache
def all_flags() -> set[str]:
    from dbt.cli.main import cli

    flags = set().union(*(project_flags(module) for _, module, _ in COMMANDS))
    for name, command in cli.commands.items():
        flags |= dbt_flags((name,)) or set()
        for sub in getattr(command, "commands", {}):
            flags |= dbt_flags((name, sub)) or set()
    return flags


def script_module(path: str) -> str | None:
    """The module a documented script runs (cli_reference's table), if it has options."""
    name = Path(path).name
    return next((module for command, module, _ in COMMANDS if command.endswith(f"scripts/{name}")), None)


def check_command(words: list[str]) -> list[str]:
    """What is wrong with one command (its words, up to a separator): an unknown command, target
    or macro, or a flag it does not take."""
    if not words:
        return []
    head, rest = words[0], words[1:]
    name = head.rsplit("/", 1)[-1]
    flags = [word.split("=", 1)[0] for word in rest if word.startswith("--") and word != "--"]
    if name == "make":
        return [
            f"make target {target}" for target in rest if not target.startswith("-") and target not in make_targets()
        ]
    if name in ("cdc-load", "cdc-run"):
        if name not in console_scripts():
            return [f"console script {name}"]
        module = "cdc_dbt_spark.loader" if name == "cdc-load" else "cdc_dbt_spark.runner"
        own = rest[: rest.index("--")] if "--" in rest else rest
        after = rest[rest.index("--") + 1 :] if "--" in rest else []
        wrong = [
            f"{name} {flag}"
            for flag in own
            if flag.startswith("--") and flag.split("=")[0] not in project_flags(module)
        ]
        build = dbt_flags(("build",)) or set()
        return wrong + [
            f"{name} -- (dbt build) {flag}" for flag in after if flag.startswith("--") and flag not in build
        ]
    if name == "dbt":
        subcommand = tuple(word for word in rest[:2] if not word.startswith("-"))
        if not subcommand:  # dbt named alone
            return []
        known = dbt_flags(subcommand[:2]) or dbt_flags(subcommand[:1])
        if known is None:
            return [f"dbt {' '.join(subcommand)}"]
        wrong = [f"dbt {' '.join(subcommand)} {flag}" for flag in flags if flag not in known]
        if subcommand[:1] == ("run-operation",) and len(subcommand) > 1:
            macro = subcommand[1]
            if not any(
                re.search(rf"macro {macro}\(", path.read_text()) for path in PROJECT_ROOT.glob("macros/**/*.sql")
            ):
                wrong.append(f"dbt run-operation {macro} (no such macro)")
        return wrong
    if name.startswith("python"):
        if rest[:1] == ["-m"] and len(rest) > 1:
            module = rest[1]
            if importlib.util.find_spec(module) is None:
                return [f"python -m {module}"]
            known = project_flags(module) if any(module == name for _, name, _ in COMMANDS) else None
            return [f"python -m {module} {flag}" for flag in flags if known is not None and flag not in known]
        if rest and rest[0].endswith(".py"):
            script = rest[0]
            if not (PROJECT_ROOT / script).is_file():
                return [f"python {script}"]
            module = script_module(script)
            return [f"{script} {flag}" for flag in flags if module and flag not in project_flags(module)]
    if head.endswith(".py") and head.startswith("scripts/"):
        module = script_module(head)
        return [f"{head} {flag}" for flag in flags if module and flag not in project_flags(module)]
    return []


COMMAND_START = re.compile(r"^(make|cdc-load|cdc-run|dbt|python3?|scripts/[\w]+\.py)$")


def command_word(word: str) -> str | None:
    """The command a word starts (`.venv/bin/dbt` is dbt; `ExecStart=.../cdc-run` is cdc-run), if any."""
    word = word.split("=", 1)[1] if re.match(r"^[A-Za-z]\w*=", word) else word
    base = word.rsplit("/", 1)[-1] if "/bin/" in word or word.startswith((".venv/", "../.venv/")) else word
    return base if COMMAND_START.match(base) else None


def commands_in(text: str) -> Iterator[list[str]]:
    """The commands a line or span gives: a command word at its start or after a separator, up
    to the next separator (a command word inside a sentence is prose)."""
    text = re.sub(r"(^|\s)#.*$", "", text)  # a shell comment
    try:
        words = shlex.split(text)
    except ValueError:  # an unbalanced quote: plain words
        words = text.split()
    current: list[str] | None = None
    starting = True
    for word in words:
        if word in SEPARATORS:
            if current:
                yield current
            current, starting = None, True
        elif starting:
            name = command_word(word)
            current = [name] if name else None
            starting = False
        elif current is not None:
            current.append(word)
    if current:
        yield current


def test_commands_targets_and_flags_exist() -> None:
    wrong = []
    for code in (code for page in PAGES if page != GENERATED for code in code_of(page) if code.shell):
        for command in commands_in(code.text):
            wrong += [f"{relative(code.page)}: {problem}" for problem in check_command(command)]
        # a flag named alone (`--skip-removed-offsets`) is one some command takes
        alone = re.fullmatch(r"(--[a-z][\w-]*)(?:[ =].*)?", code.text)
        if alone and alone.group(1) not in all_flags():
            wrong.append(f"{relative(code.page)}: {alone.group(1)} (no command takes it)")
    assert not wrong, "\n".join(wrong)


def test_cli_reference_is_generated_from_the_commands() -> None:
    assert GENERATED.read_text() == reference(), "docs/cli.md is out of date: run python -m cdc_ops.cli_reference"


def test_the_checks_catch_what_they_should() -> None:
    """The checks above would fail on a wrong name: they are not vacuous."""
    assert check_command(["make", "no-such-target"]) == ["make target no-such-target"]
    assert check_command([".venv/bin/cdc-load", "--format", "x", "--no-such-flag"]) == ["cdc-load --no-such-flag"]
    assert check_command(["cdc-run", "--once", "--", "--no-such-build-flag"]) == [
        "cdc-run -- (dbt build) --no-such-build-flag"
    ]
    assert check_command(["dbt", "build", "--profiles-dir", "profiles", "--fullrefresh"]) == ["dbt build --fullrefresh"]
    assert check_command(["dbt", "run-operation", "no_such_macro"]) == [
        "dbt run-operation no_such_macro (no such macro)"
    ]
    assert check_command(["python", "scripts/no_such.py"]) == ["python scripts/no_such.py"]
    assert check_command(["python", "scripts/bench.py", "--event", "1"]) == ["scripts/bench.py --event"]
    assert check_command(["python", "-m", "cdc_ops.no_such_module"]) == ["python -m cdc_ops.no_such_module"]
    assert list(commands_in("make demo && .venv/bin/dbt docs generate --profiles-dir profiles  # then")) == [
        ["make", "demo"],
        ["dbt", "docs", "generate", "--profiles-dir", "profiles"],
    ]
    assert list(commands_in("ExecStart=/srv/p/.venv/bin/cdc-run --once")) == [["cdc-run", "--once"]]
    assert list(commands_in("no dbt_project.yml: run inside a dbt project")) == []
    assert "getting-started" in {page.stem for page in PAGES}
