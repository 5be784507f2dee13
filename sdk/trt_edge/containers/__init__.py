"""Builder and runtime images, and running the build pipeline inside them.

The modules here drive a Docker engine through the `docker` SDK. Nothing in this
package imports `docker` at module level: `trt-edge --help` and `trt-edge validate`
must stay instant, so the SDK is imported inside the functions that talk to the daemon.

- `catalog`: which images exist (`images/<name>/image.json`) and where their files live.
- `lockfile`: the hashed lock files the images install from, and their hash.
- `wheelhouse`: the host-prepared wheel folder those installs read (no index inside).
- `base_image`: a Debian base made locally with debootstrap + `docker import`.
- `dockerfile`: an image's Dockerfile with the shared fragments of `images/_fragments/` expanded.
- `runner_tarball`: the device runner tarball device images and `trt-edge flash` carry (made
  fresh, digested, checked, unpacked).
- `context`: the build context handed to the daemon (Dockerfile, lock, wheels, sources, runner,
  CA certs).
- `images`: `build_image`, `find_current`; `listing`: `list_images`, `prune_stale`.
- `builder_choice`: which builder image a build runs in, decided by the backend that will run.
- `requirements_lock`: the lock of a manifest's `model.requirements` for one builder image
  (`trt-edge lock`), and the check that refuses a missing or stale one.
- `requirements_image`: the derived builder image holding those locked requirements.
- `build_mode`: `choose_mode` (→ `BuildMode`): local or container, decided once, with what
  a container build runs with (`ContainerSetup`);
- `container_plan`: the container run as a value (`RunImage`, `plan_container` →
  `ContainerPlan`);
- `build_runner`: `build_in_container` for `trt-edge build --container`: runs the plan,
  reads the build's event stream, judges its exit (`exit_error`).
"""
