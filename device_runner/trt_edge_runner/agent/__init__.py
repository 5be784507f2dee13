"""The device agent: verified, A/B, crash-safe installs of signed bundles, health and rollback.

`store` owns the on-disk layout and its single source of truth (`state.json`);
`install` is the ordered install transaction; `facts` reads what this device is;
`tarball` extracts a bundle `.tar` safely; `health` runs every phase against the
baseline recorded at install.
"""
