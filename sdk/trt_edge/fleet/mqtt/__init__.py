"""The operator's side of a pull fleet over MQTT: the broker's set-up, the fleet's state,
commands to one device (the device's side is `trt_edge_runner.link`)."""
