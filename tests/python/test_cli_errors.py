"""What a first user gets wrong, answered in one line and exit code 2, without Spark.

`--help` works outside a project; a wrong setting, target, path or Kafka option is named (what
and where) on one line, not as a traceback, before any Spark starts. Kafka client settings come
from a properties file, the environment or the command line, each over the one before.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_dbt_spark import loader, runner
from cdc_dbt_spark.connection import FIRST_TIER_JIT_OPTIONS
from cdc_dbt_spark.kafka import ENV_PREFIX, add_client_arguments, kafka_source, read_properties
from cdc_testkit.harness import PROJECT_ROOT

SAMPLES = str(PROJECT_ROOT / "sample_data" / "dataworks_json")


def _outside_a_project() -> dict[str, str]:
    """An environment in which no dbt project is found (nor named)."""
    return {key: value for key, value in os.environ.items() if not key.startswith(("DBT_", "CDC_"))}


@pytest.mark.parametrize("module", ["cdc_dbt_spark.loader", "cdc_dbt_spark.runner"])
def test_help_works_outside_a_project(module: str, tmp_path: Path) -> None:
    shown = subprocess.run(
        [sys.executable, "-m", module, "--help"],
        cwd=tmp_path,
        env=_outside_a_project(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("usage: cdc-")
    assert "--format" in shown.stdout or "--source" in shown.stdout
    assert "--kafka-properties" in shown.stdout


def test_a_command_outside_a_project_says_so_in_one_line(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "cdc_dbt_spark.loader", "--format", "dataworks_json", "x.jsonl"],
        cwd=tmp_path,
        env=_outside_a_project(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        f"cdc-load: error: no dbt_project.yml in {tmp_path.resolve()} or above: run inside a dbt project, "
        "or give --project-dir"
    ]


def _load(arguments: list[str], capsys: pytest.CaptureFixture, caplog: pytest.LogCaptureFixture) -> tuple[int, str]:
    """cdc-load's exit code and what it said (argparse prints, the loader logs)."""
    with caplog.at_level(logging.INFO):
        try:
            code = loader.main(arguments)
        except SystemExit as exit_:  # argparse's errors
            code = exit_.code
    errors = [record for record in caplog.records if record.levelno >= logging.ERROR]
    assert all(record.exc_info is None for record in errors), "a traceback was logged"
    return code, capsys.readouterr().err + "\n".join(record.getMessage() for record in errors)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        # an unknown carrier names the var, before Spark starts
        (
            ["--vars", "{cdc_formats: {my_format: {carrier: xml}}}", "--format", "my_format", SAMPLES],
            "cdc_formats.my_format.carrier: unknown carrier 'xml' (one of json, avro)",
        ),
        (["--format", "dataworks_json", "--target", "nowhere", SAMPLES], "profiles.yml, profile 'cdc'"),
        (["--format", "dataworks_json", "no/such/folder"], "no such file or folder: no/such/folder"),
        (["--format", "no_such_format", SAMPLES], "argument --format: invalid choice: 'no_such_format'"),
        (["--format", "dataworks_json", "--max-batch-messages", "0", SAMPLES], "takes a whole number above 0"),
        (["--format", "dataworks_json", "--vars", "[1, 2]", SAMPLES], "--vars must be a YAML or JSON mapping"),
        (
            ["--format", "dataworks_json", "--kafka-topic", "t", "--kafka-properties", "no/such.properties"],
            "--kafka-properties: cannot read no/such.properties: No such file or directory",
        ),
    ],
)
def test_user_errors_are_one_line_and_exit_2(arguments, message, capsys, caplog) -> None:
    code, said = _load(arguments, capsys, caplog)
    assert code == 2
    assert message in said
    assert "Traceback" not in said


def _client_args(*arguments: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_client_arguments(parser)
    return parser.parse_args(list(arguments))


def test_kafka_settings_from_a_file_the_environment_and_the_command_line(tmp_path: Path) -> None:
    properties = tmp_path / "client.properties"
    properties.write_text(
        "# as Kafka's own tools take them\n"
        "bootstrap.servers=broker1:9092,broker2:9092\n"
        "security.protocol = SASL_SSL\n"
        "sasl.mechanism: PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\\n"
        '    username="loader" password="from-the-file";\n'
        "! another comment\n\n"
        "kafka.ssl.truststore.location=/etc/kafka/truststore.jks\n"
    )
    environ = {f"{ENV_PREFIX}SASL_MECHANISM": "SCRAM-SHA-512", "CDC_SCHEMA": "not a Kafka setting"}
    args = _client_args(
        "--kafka-properties", str(properties), "--kafka-setting", "kafka.security.protocol=SASL_PLAINTEXT"
    )
    source = kafka_source("orders", args, environ)
    assert source.bootstrap_servers == "broker1:9092,broker2:9092"  # from the file
    assert source.settings == {
        "kafka.security.protocol": "SASL_PLAINTEXT",  # the command line over the file
        "kafka.sasl.mechanism": "SCRAM-SHA-512",  # the environment over the file
        "kafka.sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required username="loader" '
        'password="from-the-file";',
        "kafka.ssl.truststore.location": "/etc/kafka/truststore.jks",
    }
    # --bootstrap-servers over the file's
    given = _client_args("--kafka-properties", str(properties), "--bootstrap-servers", "other:9092")
    assert kafka_source("orders", given, {}).bootstrap_servers == "other:9092"


def test_a_bad_properties_line_is_named_without_repeating_it(tmp_path: Path) -> None:
    properties = tmp_path / "client.properties"
    properties.write_text("security.protocol=SASL_SSL\nmy-secret-password-on-a-line-of-its-own\n")
    with pytest.raises(ValueError, match=r"client\.properties, line 2: expected NAME=VALUE$") as raised:
        read_properties(properties)
    assert "my-secret" not in str(raised.value)


def test_a_target_whose_server_is_out_of_reach_is_named(monkeypatch, capsys, caplog) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("CDC_THRIFT_PORT", str(port))
    code, said = _load(["--format", "dataworks_json", "--target", "thrift", SAMPLES], capsys, caplog)
    assert code == 2
    assert f"the Spark Thrift Server of target thrift at 127.0.0.1:{port} is unreachable" in said


def test_cdc_run_with_a_target_the_profile_lacks_is_one_line_and_exit_2(capsys) -> None:
    code = runner.main(["--source", f"dataworks_json={SAMPLES}", "--target", "nowhere", "--once"])
    said = capsys.readouterr().err
    assert code == 2
    assert said.startswith("cdc-run: error: ") and "profiles.yml, profile 'cdc'" in said
    assert "Traceback" not in said


def test_a_one_cycle_runner_starts_its_jvm_with_the_first_jit_tier_unless_told_otherwise() -> None:
    environ: dict[str, str] = {}
    runner.use_once_java_options(environ)
    assert environ == {"CDC_DRIVER_JAVA_OPTIONS": FIRST_TIER_JIT_OPTIONS}
    assert "-XX:TieredStopAtLevel=1" in FIRST_TIER_JIT_OPTIONS.split()
    chosen = {"CDC_DRIVER_JAVA_OPTIONS": "-Xmx8g"}
    runner.use_once_java_options(chosen)
    assert chosen == {"CDC_DRIVER_JAVA_OPTIONS": "-Xmx8g"}
