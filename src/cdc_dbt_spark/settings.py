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


def _project_root() -> Path:
    """The dbt project: the checkout this package is installed from (`pip install -e .`), else
    the current folder or the nearest parent holding a dbt_project.yml, as dbt looks for it."""
    source = Path(__file__).resolve().parents[2]
    for candidate in (source, Path.cwd(), *Path.cwd().parents):
        if (candidate / "dbt_project.yml").is_file():
            return candidate
    raise SystemExit("no dbt_project.yml here or above: run from inside the cdc-dbt-spark project")


PROJECT_ROOT = _project_root()
# the project runs dbt with --profiles-dir profiles (README): the loader reads the same profiles
PROFILES_DIR = PROJECT_ROOT / "profiles"


class SettingsError(SystemExit):
    """A setting dbt cannot resolve (bad --vars, unknown target, unrendered env_var): one line."""


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


def _partial_project(project_dir: Path = PROJECT_ROOT) -> Any:
    """dbt_project.yml as dbt reads it (its YAML loader, unrendered: dbt renders vars as used)."""
    from dbt.config.project import PartialProject

    return PartialProject.from_project_root(str(project_dir), verify_version=False)


def project_vars(cli_vars: dict[str, Any] | None = None, project_dir: Path = PROJECT_ROOT) -> dict[str, Any]:
    """The vars a model sees through var(): --vars over the project-scoped vars over the global
    ones (dbt's ConfiguredVar order); values as dbt_project.yml writes them."""
    partial = _partial_project(Path(project_dir))
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
    profiles = read_profile(str(PROFILES_DIR))
    if profile_name not in profiles:
        raise SettingsError(f"no profile {profile_name!r} (dbt_project.yml's `profile`) in {PROFILES_DIR}/profiles.yml")
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
