"""Every image's Dockerfile, as the engine builds it, parses and keeps the project's promises.

What is checked is the *expanded* Dockerfile (the image's own with the shared fragments
of images/_fragments/ written in), parsed with `dockerfile-parse` (the parser, not
regexes over text): the base is a build argument whose default is the image's declared
base (pinned by digest for every base pulled from a registry), every pip install reads
the wheelhouse only with hashes required, CA certificates are injected, the identity
labels come last, device images carry the runner and sshd and run the service by
default. And the shared parts have one source: the checked-in Dockerfiles name fragments
instead of repeating them. The GPU images cannot be built here; this is the part of them
that can be checked.
"""

from __future__ import annotations

import io
import json
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from dockerfile_parse import DockerfileParser
from trt_edge.containers import catalog, dockerfile
from trt_edge.containers.errors import DockerfileError
from trt_edge.containers.lockfile import normalize_name, parse_lock

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
RUNTIMES = [n for n in NAMES if catalog.load_spec(n).role == "runtime"]
BUILD_ARGS = {"LOCK_SHA256": "lock-hash", "CONTENT_KEY": "key", "TRT_EDGE_VERSION": "9.9"}
# What the fragments hold: a checked-in Dockerfile that says any of these again
# repeats a shared part instead of naming its fragment.
SHARED_ONLY = ("pip install", "update-ca-certificates", "LABEL ", "ssh-keygen", "COPY certs/")


def expanded(name: str) -> dockerfile.Expanded:
    return dockerfile.expand(catalog.load_spec(name))


def parsed(name: str) -> DockerfileParser:
    text = expanded(name).text
    parser = DockerfileParser(fileobj=io.BytesIO(text.encode()), build_args=dict(BUILD_ARGS))
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
    stages: list[str] = []
    for value in instructions(parser, "FROM"):
        source, *alias = value.split()
        assert source == "${BASE}" or source in stages, f"{name}: FROM {value}"
        if alias:
            stages.append(alias[-1])
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
def test_identity_labels_are_present_and_last(name: str) -> None:
    parser = parsed(name)
    labels = parser.labels
    for key in REQUIRED_LABELS:
        assert key in labels, f"{name}: missing label {key}"
    spec = catalog.load_spec(name)
    assert labels[catalog.LABEL_IMAGE] == name
    assert labels[catalog.LABEL_ROLE] == spec.role
    assert labels[catalog.LABEL_TITLE] == spec.title
    # Wired to the build arguments `build_image` passes, so images carry real values.
    assert labels[catalog.LABEL_LOCK] == "lock-hash"
    assert labels[catalog.LABEL_KEY] == "key"
    assert labels[catalog.LABEL_VERSION] == "9.9"
    # Their arguments change every build: any step after them would defeat the layer cache.
    kinds = [i["instruction"] for i in parser.structure if i["instruction"] != "COMMENT"]
    values = [i["value"] for i in parser.structure if i["instruction"] != "COMMENT"]
    tail = kinds[values.index("CONTENT_KEY=unknown") :]
    assert set(tail) == {"ARG", "LABEL"} and kinds[-1] == "LABEL", tail


@pytest.mark.parametrize("name", RUNTIMES)
def test_runtime_images_carry_sshd_with_fresh_host_keys(name: str) -> None:
    parser = parsed(name)
    runs = " ".join(instructions(parser, "RUN"))
    assert "rm -f /etc/ssh/ssh_host_*" in runs and "ssh-keygen -A" in runs
    [script] = [p for p in expanded(name).context_files if p.name == "device-entrypoint.sh"]
    assert "exec /usr/sbin/sshd -D -e" in script.read_text()  # `docker run IMAGE sshd`


@pytest.mark.parametrize("name", RUNTIMES)
def test_runtime_images_serve_by_default_with_a_liveness_check(name: str) -> None:
    """The default command is the service (the entrypoint's `serve` mode), its port from the
    image's environment; the health check asks the liveness probe, which needs no key."""
    parser = parsed(name)
    [entry] = instructions(parser, "ENTRYPOINT")
    assert json.loads(entry) == ["/usr/local/sbin/trt-edge-device-entrypoint"]
    [command] = instructions(parser, "CMD")
    assert json.loads(command) == ["serve"]
    env = parser.envs
    assert env["TRT_EDGE_SERVE_HOST"] == "0.0.0.0" and env["TRT_EDGE_SERVE_PORT"] == "8000"
    assert "8000" in instructions(parser, "EXPOSE")
    [health] = instructions(parser, "HEALTHCHECK")
    assert health.endswith('CMD ["/usr/local/sbin/trt-edge-device-entrypoint", "health"]')
    [script] = [p for p in expanded(name).context_files if p.name == "device-entrypoint.sh"]
    text = script.read_text()
    assert 'exec trt-edge-device serve --host "$host" --port "$port" "$@"' in text
    assert "/v2/health/live" in text
    # The image fails to build when its lock lacks what the service imports.
    assert "trt_edge_runner.serve.app" in " ".join(instructions(parser, "RUN"))


@pytest.mark.parametrize("name", RUNTIMES)
def test_runtime_images_carry_the_runner_for_their_platform(name: str) -> None:
    """Bundles run in the C++ runner: the image takes the runner tarball of its CPU."""
    spec = catalog.load_spec(name)
    assert spec.runner_arch is not None, f"{name}: image.json has no runner_arch"
    # The wheels' platform says the image's CPU: none given means this host's.
    arches = {a for a in ("aarch64", "x86_64") for p in spec.pip.platforms if p.endswith(a)}
    assert arches == ({spec.runner_arch} if spec.pip.platforms else set())
    if not spec.pip.platforms:
        assert spec.runner_arch == platform.machine()
    parser = parsed(name)
    assert "runner/ /opt/trt-edge-runner/" in instructions(parser, "COPY")
    assert "trt-edge-run --help" in " ".join(instructions(parser, "RUN"))
    assert "device-runner" in expanded(name).fragments


@pytest.mark.parametrize("name", [n for n in NAMES if catalog.load_spec(n).role == "builder"])
def test_builders_carry_no_runner(name: str) -> None:
    assert catalog.load_spec(name).runner_arch is None
    assert "device-runner" not in expanded(name).fragments


@pytest.mark.parametrize("name", [n for n in NAMES if not catalog.load_spec(n).buildable_here])
def test_images_not_buildable_here_say_why_and_check_their_closure(name: str) -> None:
    spec = catalog.load_spec(name)
    assert spec.not_buildable_reason and len(spec.not_buildable_reason) > 40
    assert "NOT BUILT OR RUN" in spec.dockerfile.read_text()
    # An incomplete lock fails the build (pip check) instead of shipping.
    assert "PIP_CHECK=1" in instructions(parsed(name), "ARG")
    assert "pip check" in " ".join(instructions(parsed(name), "RUN"))


@pytest.mark.parametrize("name", [n for n in NAMES if catalog.load_spec(n).pip.sdists])
def test_images_locking_sdists_lock_their_build_backend_and_build_them_isolated(name: str) -> None:
    """An sdist (`pip.sdists`, e.g. TensorRT-RTX's front end) is built in the image by pip's
    isolated build environment, filled from the same --no-index wheelhouse: its backend
    (setuptools and wheel, for these) must be in the lock, so that the context carries it,
    and the lock install must not switch isolation off (the fresh venv's setuptools is the
    base's, unlocked)."""
    spec = catalog.load_spec(name)
    keys = {e.key for e in parse_lock(spec.lock_file).entries}
    assert {normalize_name(s) for s in spec.pip.sdists} <= keys
    assert {"setuptools", "wheel"} <= keys
    [install] = [r for r in instructions(parsed(name), "RUN") if "-r /tmp/lock.txt" in r]
    assert "--no-build-isolation" not in install


@pytest.mark.parametrize("name", NAMES)
def test_checked_in_dockerfiles_name_fragments_instead_of_repeating_them(name: str) -> None:
    own = catalog.load_spec(name).dockerfile.read_text()
    lines = [line for line in own.splitlines() if not line.lstrip().startswith("#")]
    repeated = [s for s in SHARED_ONLY if any(s in line for line in lines)]
    assert not repeated, f"{name}/Dockerfile repeats shared parts {repeated}: name the fragment"
    assert {"system-packages", "locked-venv", "identity-labels"} <= set(expanded(name).fragments)


def test_every_fragment_is_used_and_each_role_has_its_skeleton() -> None:
    folder = dockerfile.fragments_dir(catalog.load_spec(NAMES[0]))
    used = {f for name in NAMES for f in expanded(name).fragments}
    assert set(dockerfile.fragment_names(folder)) == used
    for name in NAMES:
        role = catalog.load_spec(name).role
        skeleton = "device-image" if role == "runtime" else "builder-stages"
        assert skeleton in expanded(name).fragments, (name, role)


def test_placeholders_take_the_image_json_values_quoted() -> None:
    text = expanded("cpu-runtime").text
    assert "{{" not in text
    # image.json's description has an apostrophe and no quotes; a quote would be escaped.
    assert f'image.description="{catalog.load_spec("cpu-runtime").description}"' in text


def copy_images(tmp_path: Path) -> Path:
    images = tmp_path / "images"
    shutil.copytree(catalog.images_dir(), images)
    return images


def test_an_unknown_fragment_is_named_with_its_file_and_line(tmp_path: Path) -> None:
    images = copy_images(tmp_path)
    path = images / "cpu" / "Dockerfile"
    lines = path.read_text().splitlines()
    lines.insert(3, "# trt-edge-fragment: no-such-part")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DockerfileError) as info:
        dockerfile.expand(catalog.load_spec("cpu", images))
    assert f"{path}:4: unknown Dockerfile fragment 'no-such-part'" in str(info.value)
    assert "locked-venv" in str(info.value)  # the known ones are listed


def test_fragments_naming_each_other_in_a_cycle_are_refused(tmp_path: Path) -> None:
    images = copy_images(tmp_path)
    (images / "_fragments" / "loop.Dockerfile").write_text("# trt-edge-fragment: loop\n")
    path = images / "cpu" / "Dockerfile"
    path.write_text(path.read_text() + "# trt-edge-fragment: loop\n")
    with pytest.raises(DockerfileError, match="cycle"):
        dockerfile.expand(catalog.load_spec("cpu", images))


def test_an_unknown_placeholder_is_refused(tmp_path: Path) -> None:
    images = copy_images(tmp_path)
    path = images / "cpu" / "Dockerfile"
    path.write_text(path.read_text() + 'LABEL x="{{colour}}"\n')
    with pytest.raises(DockerfileError, match=r"unknown placeholder \{\{colour\}\}"):
        dockerfile.expand(catalog.load_spec("cpu", images))


@pytest.mark.parametrize("name", ["jetson-jp6-runtime", "nope"])
def test_images_dockerfile_prints_the_expanded_text(name: str) -> None:
    command = [sys.executable, "-m", "trt_edge", "images", "dockerfile", name]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if name in NAMES:
        assert (done.returncode, done.stdout) == (0, expanded(name).text), done.stderr
    else:
        assert done.returncode == 2 and f"unknown image {name!r}" in done.stderr


def test_image_json_files_hold_only_known_fields() -> None:
    known = {
        "title",
        "description",
        "role",
        "default_base",
        "local_base",
        "buildable_here",
        "not_buildable_reason",
        "sources",
        "runner_arch",
        "pip",
    }
    for name in NAMES:
        doc = json.loads((catalog.load_spec(name).folder / "image.json").read_text())
        assert set(doc) <= known, (name, sorted(set(doc) - known))


def test_the_requirements_recipe_installs_exactly_the_lock_and_keeps_the_wheels_out() -> None:
    """images/_requirements/Dockerfile (a builder + a model's locked requirements): pip reads
    the lock's hashes and nothing else, and the wheels stay in the first stage."""
    from trt_edge.containers.requirements_image import recipe_path

    parser = DockerfileParser(fileobj=io.BytesIO(recipe_path().read_bytes()))
    steps = [(i["instruction"], i["value"]) for i in parser.structure]
    froms = [value for kind, value in steps if kind == "FROM"]
    assert froms == ["${BUILDER} AS requirements", "${BUILDER}"]
    [install] = [value for kind, value in steps if kind == "RUN" and "pip install" in value]
    for flag in ("--no-index", "--require-hashes", "--no-deps", "-r /tmp/requirements.lock"):
        assert flag in install
    last_from = max(i for i, (kind, _) in enumerate(steps) if kind == "FROM")
    final = steps[last_from:]
    assert not any(kind in ("COPY", "ADD") and "wheels" in value for kind, value in final)
    assert any(kind == "COPY" and value.startswith("--from=requirements") for kind, value in final)
    assert final[-1][0] == "LABEL" and 'io.trt-edge.role="requirements"' in final[-1][1]
