"""The project's settings as dbt resolves them, for the loader and the tools.

- vars: dbt_project.yml's `vars` (global, then those scoped to this project), overridden by the
  command line's `--vars`, as `var()` sees them in a model;
- the profile's target: profiles/profiles.yml read and rendered by dbt's own profile renderer
  (`env_var()`, `var()` of the `--vars`, `as_number`, ...), the target chosen as dbt chooses it.

Only dbt's config readers are used, not a parse of the project: they cost the import of dbt's
config package, once per process (measured on a busy two-core machine: 3.3 s against 0.6 s for
the plain YAML reads they replace), where a `dbt parse` would add the whole project's parse.
dbt is imported on first use: a process that never asks (Spark's Python workers) pays nothing.
Nothing is cached: env_var() reads the environment of the moment, and a tool (the scaffold) may
change dbt_project.yml between two reads.
"""

from __future__ import annotations

import os
from contextvars import copy_context
from pathlib import Path
from typing import Any


class SettingsError(SystemExit):
    """A setting dbt cannot resolve (bad --vars, unknown target, unrendered env_var): one line."""


# The project and profiles folders of this process: set once by a command from its flags
# (use_project), else found on first use. Never the package's install location: one virtual
# environment may serve several clones of the project, and each command works on its own.
_chosen: dict[str, Path] = {}


def find_project_dir(project_dir: str | os.PathLike | None = None) -> Path:
    """The dbt project, as dbt finds it: `project_dir` (--project-dir), else DBT_PROJECT_DIR,
    else the current folder or the nearest parent holding a dbt_project.yml."""
    given = project_dir or os.environ.get("DBT_PROJECT_DIR")
    if given:
        path = Path(given).expanduser().resolve()
        if not (path / "dbt_project.yml").is_file():
            flag = "--project-dir" if project_dir else "DBT_PROJECT_DIR"
            raise SettingsError(f"{flag}: no dbt_project.yml in {path}")
        return path
    here = Path.cwd()
    for candidate in (here, *here.parents):
        if (candidate / "dbt_project.yml").is_file():
            return candidate
    raise SettingsError(f"no dbt_project.yml in {here} or above: run inside a dbt project, or give --project-dir")


def use_project(project_dir: str | os.PathLike | None = None, profiles_dir: str | os.PathLike | None = None) -> Path:
    """Fixes this process's project (see find_project_dir) and profiles folder (`profiles_dir`,
    i.e. --profiles-dir, else DBT_PROFILES_DIR, else the project's `profiles`, where the README
    has dbt look with --profiles-dir profiles); the project folder."""
    project = find_project_dir(project_dir)
    given = profiles_dir or os.environ.get("DBT_PROFILES_DIR")
    profiles = Path(given).expanduser().resolve() if given else project / "profiles"
    if not (profiles / "profiles.yml").is_file():
        flag = "--profiles-dir" if profiles_dir else "DBT_PROFILES_DIR" if given else "the project"
        raise SettingsError(f"{flag}: no profiles.yml in {profiles}")
    _chosen.update(project=project, profiles=profiles)
    return project


def project_dir() -> Path:
    """This process's dbt project folder (use_project)."""
    if "project" not in _chosen:
        use_project()
    return _chosen["project"]


def profiles_dir() -> Path:
    """The folder holding the profiles.yml this process reads (use_project)."""
    if "profiles" not in _chosen:
        use_project()
    return _chosen["profiles"]


def add_project_arguments(parser: Any) -> None:
    """--project-dir and --profiles-dir on an argparse parser, as dbt has them; apply them with
    use_project(args.project_dir, args.profiles_dir)."""
    parser.add_argument(
        "--project-dir",
        default=None,
        help="the dbt project (default: DBT_PROJECT_DIR, else the current folder or the nearest parent "
        "holding dbt_project.yml)",
    )
    parser.add_argument(
        "--profiles-dir",
        default=None,
        help="the folder of profiles.yml (default: DBT_PROFILES_DIR, else the project's profiles folder)",
    )


def parse_vars(text: str | None) -> dict[str, Any]:
    """`--vars` text (a YAML or JSON mapping), read with dbt's YAML loader as dbt reads its own."""
    if not text:
        return {}
    from dbt.clients.yaml_helper import load_yaml_text

    try:
        values = load_yaml_text(text)
    except Exception as exc:  # dbt's DbtValidationError: not YAML
        raise SettingsError(f"--vars must be a YAML or JSON mapping: {' '.join(str(exc).split())}") from exc
    if not isinstance(values, dict):
        raise SettingsError(f"--vars must be a YAML or JSON mapping, e.g. '{{name: value}}', not {text!r}")
    return values


def _partial_project(project: Path | None = None) -> Any:
    """dbt_project.yml as dbt reads it (its YAML loader, unrendered: dbt renders vars as used)."""
    from dbt.config.project import PartialProject

    return PartialProject.from_project_root(str(project or project_dir()), verify_version=False)


def project_vars(cli_vars: dict[str, Any] | None = None, project: Path | None = None) -> dict[str, Any]:
    """The vars a model sees through var(): --vars over the project-scoped vars over the global
    ones (dbt's ConfiguredVar order); values as dbt_project.yml writes them; `project`: another
    project than this process's."""
    partial = _partial_project(Path(project) if project else None)
    declared = partial.project_dict.get("vars") or {}
    scoped = declared.get(partial.project_name) or {}
    return {**declared, **scoped, **(cli_vars or {})}


def project_formats(cli_vars: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """The formats the project declares (var `cdc_formats`)."""
    formats = project_vars(cli_vars).get("cdc_formats")
    if not isinstance(formats, dict) or not formats:
        raise SettingsError("var cdc_formats (dbt_project.yml or --vars) must map format names to their settings")
    return formats


def profile_target(target: str | None = None, cli_vars: dict[str, Any] | None = None) -> dict[str, Any]:
    """The rendered output of the project's profile for `target` (default: the profile's own
    `target`, rendered), with its name under "name"."""
    name, output = copy_context().run(_render_profile, target, cli_vars or {})
    return {**output, "name": name}


def _profiles() -> tuple[str, dict[str, Any]]:
    """The profile's name (dbt_project.yml's `profile`) and profiles.yml as dbt reads it."""
    from dbt.config.profile import read_profile
    from dbt.config.renderer import DbtProjectYamlRenderer

    profile_name = _partial_project().render_profile_name(DbtProjectYamlRenderer(None, {}))
    profiles_file = profiles_dir() / "profiles.yml"
    profiles = read_profile(str(profiles_dir()))
    if profile_name not in profiles:
        raise SettingsError(f"no profile {profile_name!r} (dbt_project.yml's `profile`) in {profiles_file}")
    return profile_name, profiles[profile_name]


def _render_profile(target: str | None, cli_vars: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Runs in a copy of the context: dbt reads env_var() from its invocation context, set here
    from the environment of the moment without touching the one a dbt run in this thread has."""
    from dbt.config.profile import Profile
    from dbt.config.renderer import ProfileRenderer
    from dbt_common.context import set_invocation_context

    set_invocation_context(os.environ)
    profile_name, raw_profile = _profiles()
    try:
        return Profile.render_profile(raw_profile, profile_name, target, ProfileRenderer(cli_vars))
    except Exception as exc:  # dbt's DbtProfileError: an unknown target, an env_var without a value
        raise SettingsError(f"profiles.yml, profile {profile_name!r}: {' '.join(str(exc).split())}") from exc
