"""The per-wave playbook, rendered as data and written as YAML.

One play over the wave's hosts (chosen with `--limit @hosts-file`); per device:
record the status, copy the bundle, accept the plan's trust documents (`trust add`),
`trt-edge-device install` (with `--allow-downgrade` when the plan says so), `health`; a
device whose health gate fails after installing rolls back (`rescue`); every
device writes one JSON report back to the controller (`always`, delegated to
localhost), which is how Python learns each device's outcome without parsing
Ansible's console output. Ansible runs the wave's hosts in parallel (`forks`).
"""

from __future__ import annotations

from typing import Any

REPORT_VARS: dict[str, str] = {
    "host": "{{ inventory_hostname }}",
    "stage": "{{ trt_edge_stage }}",
    "failed": "{{ trt_edge_failed | default(false) }}",
    "failed_task": "{{ ansible_failed_task.name | default('') }}",
    "failed_msg": "{{ ansible_failed_result.msg | default('') }}",
    "before": "{{ trt_edge_before.stdout | default('') }}",
    "trust_stdout": "{{ trt_edge_trust.stdout | default('') }}",
    "trust_stderr": "{{ trt_edge_trust.stderr | default('') }}",
    "install_stdout": "{{ trt_edge_install.stdout | default('') }}",
    "install_stderr": "{{ trt_edge_install.stderr | default('') }}",
    "install_delta": "{{ trt_edge_install.delta | default('') }}",
    "health_stdout": "{{ trt_edge_health.stdout | default('') }}",
    "health_stderr": "{{ trt_edge_health.stderr | default('') }}",
    "health_delta": "{{ trt_edge_health.delta | default('') }}",
    "rollback_rc": "{{ trt_edge_rollback.rc | default(-1) }}",
    "rollback_stderr": "{{ trt_edge_rollback.stderr | default('') }}",
    "after": "{{ trt_edge_after.stdout | default('') }}",
    "t0": "{{ trt_edge_t0 }}",
    "t1": "{{ now(utc=true).timestamp() }}",
}


def _stage(name: str) -> dict[str, Any]:
    return {"name": f"stage: {name}", "ansible.builtin.set_fact": {"trt_edge_stage": name}}


def _report_tasks(cli: str, report: dict[str, str]) -> list[dict[str, Any]]:
    """Every play's last two tasks on a device: read its status, then write `report` (which
    may quote that status) back to the controller as `<host>.json`."""
    return [
        {
            "name": "status after",
            "ansible.builtin.command": f"{cli} status --json",
            "register": "trt_edge_after",
            "changed_when": False,
            "failed_when": False,
        },
        {
            "name": "report to the controller",
            "ansible.builtin.copy": {
                "content": "{{ trt_edge_report | to_json }}",
                "dest": "{{ trt_edge_report_dir }}/{{ inventory_hostname }}.json",
                "mode": "0644",
            },
            "delegate_to": "localhost",
            "vars": {"trt_edge_report": report},
        },
    ]


def render_playbook() -> list[dict[str, Any]]:
    """The playbook as data; the rollout's values arrive as extra vars (`-e @vars.json`)."""
    cli = "{{ trt_edge_cli }}"
    bundle = "{{ trt_edge_remote_dir }}/{{ trt_edge_bundle_name }}"
    return [
        {
            "name": "trt-edge rollout, wave {{ trt_edge_wave }}",
            "hosts": "all",
            "gather_facts": False,
            "tasks": [
                {
                    "name": "record the start",
                    "ansible.builtin.set_fact": {
                        "trt_edge_t0": "{{ now(utc=true).timestamp() }}",
                        "trt_edge_stage": "status",
                    },
                },
                {
                    "name": "install and health-check the bundle",
                    "block": [
                        {
                            "name": "status before",
                            "ansible.builtin.command": f"{cli} status --json",
                            "register": "trt_edge_before",
                            "changed_when": False,
                        },
                        _stage("copy"),
                        {
                            "name": "bundle directory",
                            "ansible.builtin.file": {
                                "path": "{{ trt_edge_remote_dir }}",
                                "state": "directory",
                                "mode": "0755",
                            },
                        },
                        {
                            "name": "copy the bundle",
                            "ansible.builtin.copy": {
                                "src": "{{ trt_edge_bundle_src }}",
                                "dest": bundle,
                                "mode": "0644",
                            },
                        },
                        _stage("trust"),
                        {
                            "name": "copy the trust documents",
                            "ansible.builtin.copy": {
                                "src": "{{ item.src }}",
                                "dest": "{{ item.dest }}",
                                "mode": "0644",
                            },
                            "loop": "{{ trt_edge_trust_files }}",
                        },
                        {
                            "name": "accept the trust documents (rotations, revocations)",
                            "ansible.builtin.command": (
                                f"{cli} trust add --json "
                                "{{ trt_edge_trust_files | map(attribute='dest') | join(' ') }}"
                            ),
                            "register": "trt_edge_trust",
                            "when": "trt_edge_trust_files | length > 0",
                        },
                        _stage("install"),
                        {
                            "name": "install (verify, A/B, smoke-run, switch)",
                            "ansible.builtin.command": (
                                f"{cli} install {bundle} --json"
                                "{{ ' --allow-downgrade' if trt_edge_allow_downgrade else '' }}"
                            ),
                            "register": "trt_edge_install",
                        },
                        _stage("health"),
                        {
                            "name": "health gate",
                            "ansible.builtin.command": (
                                f"{cli} health --json --max-regression "
                                "{{ trt_edge_max_regression }} --runs {{ trt_edge_runs }}"
                            ),
                            "register": "trt_edge_health",
                        },
                        _stage("done"),
                    ],
                    "rescue": [
                        {
                            "name": "roll back a device that failed its health gate",
                            "ansible.builtin.command": f"{cli} rollback --json",
                            "register": "trt_edge_rollback",
                            "when": "trt_edge_stage == 'health'",
                            "failed_when": False,
                        },
                        {
                            "name": "mark the device failed",
                            "ansible.builtin.set_fact": {"trt_edge_failed": True},
                        },
                    ],
                    "always": _report_tasks(cli, REPORT_VARS),
                },
            ],
        }
    ]


def render_rollback_playbook() -> list[dict[str, Any]]:
    """Roll back the devices of a halted wave that did update (`on_halt: rollback_wave`)."""
    cli = "{{ trt_edge_cli }}"
    return [
        {
            "name": "trt-edge rollout halted: roll wave {{ trt_edge_wave }} back",
            "hosts": "all",
            "gather_facts": False,
            "tasks": [
                {
                    "name": "roll back",
                    "ansible.builtin.command": f"{cli} rollback --json",
                    "register": "trt_edge_rollback",
                    "failed_when": False,
                },
                *_report_tasks(
                    cli,
                    {
                        "host": "{{ inventory_hostname }}",
                        "rollback_rc": "{{ trt_edge_rollback.rc | default(-1) }}",
                        "rollback_stderr": "{{ trt_edge_rollback.stderr | default('') }}",
                        "after": "{{ trt_edge_after.stdout | default('') }}",
                    },
                ),
            ],
        }
    ]


METRICS_URL = (
    "{{ trt_edge_metrics_url | default('http://127.0.0.1:' ~ trt_edge_metrics_port "
    "~ trt_edge_metrics_path) }}"
)


def _scrape(name: str, register: str) -> dict[str, Any]:
    """Fetch the service's `/metrics` on the device (the uri module runs there, so a
    service on loopback is reached); a failure is reported, not raised."""
    return {
        "name": name,
        "ansible.builtin.uri": {"url": METRICS_URL, "return_content": True, "timeout": 30},
        "register": register,
        "failed_when": False,
    }


def render_metrics_playbook() -> list[dict[str, Any]]:
    """The live-traffic gate on a wave's updated devices: scrape, wait the window, scrape
    again, and report both texts to the controller, where they are judged."""
    cli = "{{ trt_edge_cli }}"
    scraped = {
        f"{key}_{i}": f"{{{{ trt_edge_scrape_{i}.{field} | default({default}) }}}}"
        for i in (0, 1)
        for key, field, default in (
            ("metrics", "content", "''"),
            ("status", "status", "-1"),
            ("error", "msg", "''"),
        )
    }
    return [
        {
            "name": "trt-edge rollout, wave {{ trt_edge_wave }}: live-traffic gate",
            "hosts": "all",
            "gather_facts": False,
            "tasks": [
                _scrape("scrape /metrics (window start)", "trt_edge_scrape_0"),
                {
                    "name": "wait the window",
                    "ansible.builtin.pause": {"seconds": "{{ trt_edge_metrics_window }}"},
                },
                _scrape("scrape /metrics (window end)", "trt_edge_scrape_1"),
                *_report_tasks(
                    cli,
                    {"host": "{{ inventory_hostname }}", "url": METRICS_URL, **scraped},
                ),
            ],
        }
    ]


def metrics_playbook_yaml() -> str:
    header = "# Rendered by `trt-edge rollout`: the live-traffic gate (health.metrics).\n"
    return _dump(render_metrics_playbook(), header)


def _dump(plays: list[dict[str, Any]], header: str) -> str:
    import yaml

    return header + yaml.safe_dump(plays, sort_keys=False, width=100)


def playbook_yaml() -> str:
    header = "# Rendered by `trt-edge rollout`; one run per wave (--limit @wave-N.hosts).\n"
    return _dump(render_playbook(), header)


def rollback_playbook_yaml() -> str:
    header = "# Rendered by `trt-edge rollout`: rolls a halted wave's updated devices back.\n"
    return _dump(render_rollback_playbook(), header)
