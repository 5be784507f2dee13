"""How the product code imports (docs/design.md, "Layout"): no circle between modules or
packages, and a function-local import only where importing at the top would cost every
caller — a heavy third-party package, or one of our modules that is itself heavy or that
keeps `trt-edge --help` instant by being loaded only when its command runs.

A circle held shut by a function-local import still ties two modules into one: both
checks count every import that runs (function-local ones too; `if TYPE_CHECKING:` ones
never run and do not count).
"""

from __future__ import annotations

from collections import defaultdict

from tests.lint.import_graph import cycles, imports, package_of, top_level_closure

# Third-party packages whose import costs a caller that does not need them real time or
# memory (torch and what is built on it, the TensorRT and ONNX stacks, Docker's SDK, the
# Hugging Face stack, and the rich/numpy/cryptography/jinja2 layers `trt-edge validate`
# and `--help` never need): the only ones a function may import.
HEAVY = frozenset(
    {
        "torch",
        "torchao",
        "executorch",
        "transformers",
        "tokenizers",
        "safetensors",
        "tensorrt",
        "tensorrt_rtx",
        "onnx",
        "onnxscript",
        "docker",
        "numpy",
        "matplotlib",
        "rich",
        "cryptography",
        "jinja2",
        "yaml",
        "packaging",
        "prometheus_client",
        "uvicorn",
        "starlette",
        "ansible_runner",
        # The MQTT client: an optional extra of the device package (`trt-edge-runner[mqtt]`),
        # so every other device command must start without it.
        "paho",
        # The registry client (`trt-edge-runner[follow]`, an optional extra on devices) and
        # the HTTP stack under it: only `follow`, `publish` and `promote` load them.
        "oras",
        "requests",
        # The grammar engine: optional (`trt-edge-runner[structured]`); a service without it
        # still runs and refuses response_format by name.
        "llguidance",
    }
)

# Function-local imports of our own modules, all of modules that are heavy themselves (each
# keeps torch, numpy or Docker's SDK out of `trt-edge --help` and of light callers). The
# ceiling only goes down.
OWN_LOCAL_CEILING = 30


def test_no_import_circle_between_modules() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in imports():
        if imp.ours and not imp.type_only and imp.target != imp.source:
            edges[imp.source].add(imp.target)
    assert cycles(edges) == [], "modules that import each other (directly or round a circle)"


def test_no_import_circle_between_packages() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in imports():
        source, target = package_of(imp.source), package_of(imp.target)
        if imp.ours and not imp.type_only and source != target:
            edges[source].add(target)
    assert cycles(edges) == [], "packages that import each other: make the dependency one-way"


def test_a_function_imports_only_heavy_third_party_packages() -> None:
    light = [str(i) for i in imports() if i.local and not i.ours and i.top not in HEAVY]
    assert light == [], "import these at the top of the module (they are light)"


def test_a_function_imports_only_those_of_our_modules_that_are_heavy() -> None:
    light = [
        f"{i} (imports no heavy package: import it at the top)"
        for i in imports()
        if i.local and i.ours and not i.type_only and not top_level_closure(i.target) & HEAVY
    ]
    assert light == []


def test_function_local_imports_of_our_own_modules_stay_under_the_ceiling() -> None:
    own = [i for i in imports() if i.local and i.ours and not i.type_only]
    assert len(own) <= OWN_LOCAL_CEILING, (
        f"{len(own)} function-local imports of our own modules (ceiling {OWN_LOCAL_CEILING}): "
        "import at the top of the module, unless that loads something heavy at `--help`"
    )
