"""Every image's Dockerfile parses and keeps the project's promises.

Checked with `dockerfile-parse` (the parser, not regexes over text): the base is a
build argument whose default is the image's declared base (pinned by digest for
every base pulled from a registry), every pip install reads the wheelhouse only
with hashes required, CA certificates are injected, and the identity labels the
tooling reads are present. The GPU images cannot be built here; this is the part
of them that can be checked.
"""

from __future__ import annotations

import re

import pytest
from dockerfile_parse import DockerfileParser
from trt_edge.containers import catalog

DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
REQUIRED_LABELS = (
    catalog.LABEL_VERSION,
    catalog.LABEL_TITLE,
    catalog.LABEL_BASE,
    catalog.LABEL_IMAGE,
    catalog.LABEL_ROLE,
    catalog.LABEL_LOCK,
    catalog.LABEL_SOURCE,
    catalog.LABEL_KEY,
)
NAMES = catalog.image_names()


BUILD_ARGS = {"LOCK_SHA256": "lock-hash", "CONTENT_KEY": "key", "TRT_EDGE_VERSION": "9.9"}


def parsed(name: str) -> DockerfileParser:
    parser = DockerfileParser(
        path=str(catalog.load_spec(name).dockerfile), build_args=dict(BUILD_ARGS)
    )
    parser.content  # noqa: B018 - read once so a parse error fails here
    return parser


def instructions(parser: DockerfileParser, kind: str) -> list[str]:
    return [i["value"] for i in parser.structure if i["instruction"] == kind]


def test_every_catalog_image_has_a_folder() -> None:
    from trt_edge.targets import load_catalog

    wanted = {t.builder_image for t in load_catalog()} | {t.runtime_image for t in load_catalog()}
    missing = sorted(wanted - set(NAMES))
    assert not missing, f"target catalog names images with no folder under images/: {missing}"


@pytest.mark.parametrize("name", NAMES)
def test_base_is_an_argument_defaulting_to_the_declared_base(name: str) -> None:
    spec = catalog.load_spec(name)
    parser = parsed(name)
    first_arg = instructions(parser, "ARG")[0]
    assert first_arg.startswith("BASE="), "the first ARG must be BASE (used by every FROM)"
    default = first_arg.split("=", 1)[1]
    froms = instructions(parser, "FROM")
    assert froms and all(f.split()[0] in ("${BASE}", "deps") for f in froms), froms
    if spec.local_base:
        assert default.startswith(spec.default_base), (default, spec.default_base)
    else:
        assert default == spec.default_base
        assert DIGEST.search(default), f"{name}: registry base must be pinned by digest: {default}"


@pytest.mark.parametrize("name", NAMES)
def test_pip_reads_only_the_wheelhouse_with_hashes(name: str) -> None:
    runs = " ".join(instructions(parsed(name), "RUN"))
    installs = [m.group(0) for m in re.finditer(r"pip install[^&]*", runs)]
    assert installs, "no pip install"
    for install in installs:
        assert "--no-index" in install, install
        assert "--no-deps" in install, install
    lock_installs = [i for i in installs if "lock.txt" in i]
    assert len(lock_installs) == 1
    assert "--require-hashes" in lock_installs[0]
    assert "--find-links /tmp/wheels" in lock_installs[0]


@pytest.mark.parametrize("name", NAMES)
def test_extra_ca_certificates_are_injected(name: str) -> None:
    parser = parsed(name)
    assert any(c.startswith("certs/ ") for c in instructions(parser, "COPY"))
    assert "update-ca-certificates" in " ".join(instructions(parser, "RUN"))


@pytest.mark.parametrize("name", NAMES)
def test_identity_labels_are_present(name: str) -> None:
    parser = parsed(name)
    labels = parser.labels
    for key in REQUIRED_LABELS:
        assert key in labels, f"{name}: missing label {key}"
    assert labels[catalog.LABEL_IMAGE] == name
    assert labels[catalog.LABEL_ROLE] == catalog.load_spec(name).role
    # Wired to the build arguments `build_image` passes, so images carry real values.
    assert labels[catalog.LABEL_LOCK] == "lock-hash"
    assert labels[catalog.LABEL_KEY] == "key"
    assert labels[catalog.LABEL_VERSION] == "9.9"


@pytest.mark.parametrize("name", [n for n in NAMES if catalog.load_spec(n).role == "runtime"])
def test_runtime_images_run_sshd_with_fresh_host_keys(name: str) -> None:
    parser = parsed(name)
    runs = " ".join(instructions(parser, "RUN"))
    assert "rm -f /etc/ssh/ssh_host_*" in runs and "ssh-keygen -A" in runs
    entry = instructions(parser, "ENTRYPOINT")
    assert entry and "trt-edge-device-entrypoint" in entry[-1]
    script = (catalog.load_spec(name).folder / "entrypoint.sh").read_text()
    assert "exec /usr/sbin/sshd -D -e" in script


@pytest.mark.parametrize("name", [n for n in NAMES if not catalog.load_spec(n).buildable_here])
def test_images_not_buildable_here_say_why(name: str) -> None:
    spec = catalog.load_spec(name)
    assert spec.not_buildable_reason and len(spec.not_buildable_reason) > 40
    text = spec.dockerfile.read_text()
    assert "NOT BUILT OR RUN" in text
    assert "pip check" in text  # an incomplete lock fails the build instead of shipping
