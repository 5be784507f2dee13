"""Bundles in an OCI registry, and devices that follow a channel (docs/fleet.md, "Fleets
behind NAT").

`artifact` is the layout both sides agree on (the host's `trt-edge publish` writes it, the
device reads it); `reference` parses `REGISTRY/REPO:TAG`; `registry` is the one client
(ORAS's, over the OCI distribution API: auth, TLS, ranged blob GETs); `blob_store` keeps
blobs by digest with resumable, checked downloads under a disk budget; `follower` is one
poll (fetch what is missing, assemble, install through `agent/install.py`) and the loop
around it; `follower_state` is the follower's small JSON document.
"""
