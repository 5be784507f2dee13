"""The device's link to a pull fleet: reports and commands over MQTT.

A device behind NAT cannot be reached by SSH, so it connects out to a broker
(`trt-edge-device mqtt`): it publishes its state (retained) and its presence, and takes
rollout commands (update, hold, resume, rollback), answering each with an ack. What it was
told lands in `ROOT/desired.json`, which the follower reads on every poll; a rollback runs
the agent's own rollback. `documents.py` holds the documents that cross the broker (each
with its schema and decode function), `desired.py` the desired document, `topics.py` the
topic names, `actions.py` what each command does, `state.py` how the state is gathered,
`broker.py` how to reach the broker, `session.py` the MQTT client loop.
"""
