"""Staged fleet rollouts on Ansible: plan as data, waves planned in Python, execution by
`ansible-playbook`, one report.

`plan` reads the rollout plan (YAML), `inventory` reads devices through
`ansible-inventory`, `schedule` is the pure planner (fingerprint matching, wave
cutting), `playbook` renders the per-wave playbook, `execute` runs the waves and
stops when `halt` (the pure halt rule) says the failure threshold is crossed,
`report` renders the result.
"""
