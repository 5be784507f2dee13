"""`trt-edge rollout --dry-run`: real `ansible-inventory` and `ansible-playbook --syntax-check`,
no device contacted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from trt_edge.cli.main import main

from tests.fleet.rollout_cli import rollout
from tests.helpers.fixtures_bundles import Bundles

INVENTORY = """
edge:
  children:
    canary:
      hosts:
        pc-01: {ansible_host: 192.0.2.1, trt_edge_facts: {arch: x86_64}}
    site:
      hosts:
        pc-02: {ansible_host: 192.0.2.2, trt_edge_facts: {arch: x86_64}}
        pc-03: {ansible_host: 192.0.2.3, trt_edge_facts: {arch: x86_64}}
        pc-04: {ansible_host: 192.0.2.4, trt_edge_facts: {arch: x86_64}}
        orin-01: {ansible_host: 192.0.2.9, trt_edge_target: jetson-orin-nano-jp6}
        mystery: {ansible_host: 192.0.2.10}
lab:
  hosts:
    pc-lab: {ansible_host: 192.0.2.20, trt_edge_facts: {arch: x86_64}}
"""


@pytest.fixture
def rollout_files(tmp_path: Path, agent_bundles: Bundles) -> tuple[Path, Path]:
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(INVENTORY)
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        f"bundle: {agent_bundles.v2}\n"
        "groups: [edge]\n"
        "waves: [1, '50%', '100%']\n"
        "health: {max_latency_regression: 1.0, runs: 2}\n"
        "failure_threshold: 0\n"
    )
    return plan, inventory


def test_dry_run_plans_waves_skips_misfits_and_renders_a_valid_playbook(
    rollout_files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan, inventory = rollout_files
    workdir = tmp_path / "work"
    report_path = tmp_path / "report.json"
    code = rollout(plan, inventory, "--dry-run", "--workdir", workdir, "--report", report_path)
    out = capsys.readouterr().out
    assert code == 0, out
    report = json.loads(report_path.read_text())
    assert report["dry_run"] and report["version"] == "2.0.0"
    assert report["waves"] == [["pc-01"], ["pc-02"], ["pc-03", "pc-04"]]
    results = {d["host"]: d for d in report["devices"]}
    assert "pc-lab" not in results  # not in the plan's groups
    assert results["orin-01"]["result"] == "skipped"
    assert "arch: bundle needs x86_64, device is aarch64" in results["orin-01"]["reason"]
    assert results["mystery"]["result"] == "skipped"
    assert "no trt_edge_facts or trt_edge_target" in results["mystery"]["reason"]
    assert {results[h]["result"] for h in ("pc-01", "pc-02", "pc-03", "pc-04")} == {"planned"}
    assert (workdir / "wave-3.hosts").read_text() == "pc-03\npc-04\n"
    assert "{{ trt_edge_cli }} install" in (workdir / "rollout.yml").read_text()
    assert "rollout tiny 2.0.0 (dry run)" in out


def test_bad_plan_is_reported_with_file_and_line_not_a_traceback(
    rollout_files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    plan, inventory = rollout_files
    plan.write_text(plan.read_text().replace("failure_threshold: 0", "failure_threshold: lots"))
    code = rollout(plan, inventory, "--dry-run")
    err = capsys.readouterr().err
    assert code == 2
    assert f"{plan}:5: failure_threshold" in err and "Traceback" not in err


def test_missing_inventory_is_bad_input(
    rollout_files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan, _ = rollout_files
    code = rollout(plan, tmp_path / "nope.yml", "--dry-run")
    assert code == 2
    assert "nope.yml: inventory not found" in capsys.readouterr().err


def test_garbage_inventory_shows_why_ansible_cannot_parse_it(
    rollout_files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    plan, inventory = rollout_files
    inventory.write_text("edge: [unclosed\n  - : ::\n")
    code = rollout(plan, inventory, "--dry-run")
    err = capsys.readouterr().err
    assert code == 2
    assert f"{inventory}: ansible-inventory cannot parse this inventory" in err
    assert "YAML parsing failed" in err and "has no hosts" not in err


def test_report_and_workdir_paths_are_checked_before_the_rollout(
    rollout_files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan, inventory = rollout_files
    workdir = tmp_path / "work"
    report_dir = tmp_path / "reports"
    report_dir.mkdir()
    code = rollout(plan, inventory, "--dry-run", "--workdir", workdir, "--report", report_dir)
    err = capsys.readouterr().err
    assert code == 2 and f"--report {report_dir}: is a directory" in err
    assert not workdir.exists()  # refused before anything ran
    under_a_file = tmp_path / "plan.yaml" / "report.json"
    assert rollout(plan, inventory, "--dry-run", "--report", under_a_file) == 2
    assert f"--report {under_a_file}: cannot write there" in capsys.readouterr().err
    a_file = tmp_path / "not-a-dir"
    a_file.write_text("x")
    assert rollout(plan, inventory, "--dry-run", "--workdir", a_file) == 2
    err = capsys.readouterr().err
    assert f"--workdir {a_file}: cannot use it as the rollout's work directory" in err
    assert "Traceback" not in err


def test_work_files_are_replaced_not_written_through(
    rollout_files: tuple[Path, Path], tmp_path: Path
) -> None:
    """The playbook and wave files are renamed into place: a link there is replaced, the
    file it pointed to is untouched, and no temporary file is left behind."""
    plan, inventory = rollout_files
    workdir = tmp_path / "work"
    workdir.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    for name in ("rollout.yml", "wave-1.hosts", "wave-1.vars.json"):
        (workdir / name).symlink_to(victim)
    assert rollout(plan, inventory, "--dry-run", "--workdir", workdir) == 0
    assert victim.read_text() == "keep"
    assert not (workdir / "rollout.yml").is_symlink()
    assert "{{ trt_edge_cli }} install" in (workdir / "rollout.yml").read_text()
    assert (workdir / "wave-1.hosts").read_text() == "pc-01\n"
    assert not [p.name for p in workdir.iterdir() if ".tmp-" in p.name]


def test_a_deliberate_downgrade_and_trust_documents_reach_the_device_commands(
    rollout_files: tuple[Path, Path], tmp_path: Path
) -> None:
    """`allow_downgrade: true` becomes `--allow-downgrade` on install, and `trust:` files are
    copied and accepted (`trust add`) before it; the rendered playbook passes
    ansible-playbook --syntax-check with both."""
    plan, inventory = rollout_files
    rotation = tmp_path / "next.rotation.json"
    rotation.write_text("{}")
    plan.write_text(plan.read_text() + "allow_downgrade: true\ntrust: [next.rotation.json]\n")
    workdir = tmp_path / "work"
    args = ["rollout", str(plan), "--inventory", str(inventory), "--dry-run"]
    assert main([*args, "--workdir", str(workdir)]) == 0
    extra = json.loads((workdir / "wave-1.vars.json").read_text())
    assert extra["trt_edge_allow_downgrade"] is True
    assert extra["trt_edge_trust_files"] == [
        {"src": str(rotation), "dest": "/var/tmp/trt-edge/next.rotation.json"}
    ]
    import yaml

    tasks = yaml.safe_load((workdir / "rollout.yml").read_text())[0]["tasks"][1]["block"]
    commands = {t["name"]: t.get("ansible.builtin.command", "") for t in tasks}
    assert (
        "' --allow-downgrade' if trt_edge_allow_downgrade"
        in (commands["install (verify, A/B, smoke-run, switch)"])
    )
    assert "trust add --json" in commands["accept the trust documents (rotations, revocations)"]


def test_a_missing_trust_document_is_bad_input(
    rollout_files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    plan, inventory = rollout_files
    plan.write_text(plan.read_text() + "trust: [nowhere.json]\n")
    code = main(["rollout", str(plan), "--inventory", str(inventory), "--dry-run"])
    assert code == 2 and "nowhere.json: no such file" in capsys.readouterr().err
