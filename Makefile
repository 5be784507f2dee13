# trt-edge — the two commands a newcomer needs: `make demo` and `make test`.
# Everything else here is a step those two take.

PY        ?= python3
VENV      := .venv
BIN       := $(VENV)/bin
PYTHON    := $(BIN)/python
STAMP     := $(VENV)/.setup-stamp
CPP_SRC   := device_runner/cpp
CPP_BUILD := $(CPP_SRC)/build
JOBS      ?= 2

.PHONY: setup sysdeps lint typecheck test test-py test-cpp conformance device-aarch64 device-x86_64 \
        demo demo-runner demo-bundle bench images docs clean

setup: $(STAMP)

# System packages (C++ toolchains incl. aarch64 cross + qemu, nlohmann-json, Docker, debootstrap);
# installs only what is missing.
sysdeps:
	.ci/sysdeps

# Re-runs only when the pins or the package metadata change.
$(STAMP): requirements-dev.txt sdk/pyproject.toml device_runner/pyproject.toml
	test -x $(PYTHON) || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -r requirements-dev.txt
	$(BIN)/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e device_runner -e sdk
	touch $@

# Both tools take their files from pyproject.toml (ruff: the whole checkout minus
# extend-exclude; mypy: `files`), and tests/lint checks that each covers every .py git has.
lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The device package twice: as part of the host (3.11) and as JetPack 6 runs it (3.10).
typecheck: setup
	$(BIN)/mypy
	$(BIN)/mypy --python-version 3.10 device_runner/trt_edge_runner

# Torch-TensorRT's ExecuTorch blob serializer is pure Python; its wheel cannot be
# imported here (no TensorRT), so the one file our TR01/TR02 reader is checked
# against is taken out of the pinned wheel (4 MB from PyPI) once per venv.
UPSTREAM          := $(VENV)/upstream
TRT_SERIALIZATION := $(UPSTREAM)/torch_tensorrt/executorch/serialization.py
$(TRT_SERIALIZATION): $(STAMP)
	rm -rf $(UPSTREAM) && mkdir -p $(UPSTREAM)/wheels
	$(BIN)/pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
	  torch-tensorrt==2.14.0 -d $(UPSTREAM)/wheels
	$(PYTHON) -c "import glob, zipfile, sys; \
	  zipfile.ZipFile(glob.glob('$(UPSTREAM)/wheels/*.whl')[0]).extract('torch_tensorrt/executorch/serialization.py', '$(UPSTREAM)')"
	test -f $@

test-py: setup $(TRT_SERIALIZATION)
	TORCH_TENSORRT_SERIALIZATION_PY=$(abspath $(TRT_SERIALIZATION)) \
	  $(BIN)/pytest -q -n $(JOBS) --dist loadgroup

# C++: the header-only policy (and, once present, the runner) built with
# warnings as errors and run under ctest, against the ExecuTorch C++ SDK
# shipped inside the executorch wheel.
test-cpp: setup sysdeps
	cmake -S $(CPP_SRC) -B $(CPP_BUILD) -DCMAKE_BUILD_TYPE=Release \
	  -DPython3_EXECUTABLE=$(abspath $(PYTHON)) > $(CPP_BUILD).log 2>&1 || (cat $(CPP_BUILD).log; exit 1)
	cmake --build $(CPP_BUILD) -j $(JOBS)
	cd $(CPP_BUILD) && ctest --output-on-failure

# Every shared vector file through both implementations (Python: one entry point for all).
VECTORS := profile_selection mode_decision bundle_layouts dtypes
conformance: setup test-cpp
	for v in $(VECTORS); do $(PYTHON) -m trt_edge_runner.conformance tests/vectors/$$v.json || exit 1; done
	$(CPP_BUILD)/trt_edge_conformance tests/vectors/profile_selection.json
	$(CPP_BUILD)/trt_edge_conformance tests/vectors/mode_decision.json
	$(CPP_BUILD)/trt_edge_bundle_conformance tests/vectors/bundle_layouts.json
	$(CPP_BUILD)/trt_edge_bundle_document_conformance tests/vectors/bundle_documents.json
	$(CPP_BUILD)/trt_edge_dtype_conformance tests/vectors/dtypes.json

# Device tarballs: trt-edge-run + exactly the ExecuTorch libraries it loads, relocatable
# ($ORIGIN/../lib runpath), as dist/trt-edge-runner-<version>-linux-<arch>.tar.gz.
# aarch64 cross-compiles (cmake/aarch64-linux-gnu.cmake) against the aarch64
# executorch wheel's C++ SDK (hash-pinned in executorch-sdk.lock, cached, never
# installed); x86_64 builds natively against the venv's. Incremental when re-run.
DEVICE_TARBALL := $(PYTHON) $(CPP_SRC)/tools/build_device_tarball.py --jobs $(JOBS)
device-aarch64: setup sysdeps
	$(DEVICE_TARBALL) --arch aarch64

device-x86_64: setup sysdeps
	$(DEVICE_TARBALL) --arch x86_64

# The documentation site (mkdocs.yml), strictly: a page missing from the nav, a broken link or
# anchor fails it. Output in site/ (git-ignored).
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

# The tarballs are built before pytest so tests/device_tarball finds them fresh.
test: sysdeps lint typecheck docs conformance device-aarch64 device-x86_64 test-py

# The mission as a user meets it, on the embedded default (CPU backend, no GPU, no Docker):
# a mini Gemma-3 written on the spot (random weights, a tokenizer trained here, a Gemma-style
# chat template) -> its manifest checked (prefill/decode profiles) -> `trt-edge build` (a
# line per stage) -> each phase under its guard in the C++ runner trt-edge-run -> text in,
# text out on the host (`trt-edge generate`) and the device path (`trt-edge-device generate`
# driving trt-edge-run: the bundle's tokenizer and chat template).
DEMO_SRC    := examples/gemma3
DEMO_BUNDLE := dist/demo-gemma3-0.1.0
DEMO_RUNNER := $(CPP_BUILD)/runner/trt-edge-run
DEMO_PROMPT := The cache is a buffer of keys and values
demo: setup
	@echo "== 1-3 (side by side: the C++ runner compiles on one core while the model builds)"
	$(MAKE) --no-print-directory -j 2 demo-runner demo-bundle
	@echo "== 4. each phase under its guard in the C++ runner"
	$(DEMO_RUNNER) --bundle $(DEMO_BUNDLE) --phase prefill
	$(DEMO_RUNNER) --bundle $(DEMO_BUNDLE) --phase decode
	@echo "== 5. text in, text out on the host (ExecuTorch's Python runtime); random weights,"
	@echo "      so the words are noise: what matters is that they went through every stage"
	$(BIN)/trt-edge generate $(DEMO_BUNDLE) --prompt "$(DEMO_PROMPT)" --max-new-tokens 16
	@echo "== 6. the device path: trt-edge-device -> trt-edge-run, a chat through the template"
	TRT_EDGE_RUNNER=$(DEMO_RUNNER) $(BIN)/trt-edge-device generate $(DEMO_BUNDLE) \
	  --prompt "What does a KV cache hold?" --chat --system "Answer briefly." --max-new-tokens 16
	@echo "== 7. the same bundle served: trt-edge-device serve (one engine, loaded once), one chat"
	@echo "      request with the openai client, then the service stops"
	$(PYTHON) $(DEMO_SRC)/demo_serve.py $(DEMO_BUNDLE) --runner $(DEMO_RUNNER) \
	  --device-cli $(BIN)/trt-edge-device

demo-bundle: setup
	@echo "== 1. a mini Gemma-3 folder (save_pretrained + tokenizer + chat template), written here"
	$(PYTHON) $(DEMO_SRC)/write_model.py --demo $(DEMO_SRC)/demo-gemma3
	@echo "== 2. the manifest: inputs, ordered profiles (decode, prefill), the phase map"
	$(BIN)/trt-edge validate $(DEMO_SRC)/demo.yaml
	@echo "== 3. build: export, lower, bundle, validate against transformers"
	$(BIN)/trt-edge build $(DEMO_SRC)/demo.yaml --out dist

# Only the runner binary (not the tests): what `make demo` needs of the C++ side; incremental.
demo-runner: setup
	.ci/sysdeps runner
	test -f $(CPP_BUILD)/CMakeCache.txt || cmake -S $(CPP_SRC) -B $(CPP_BUILD) -DCMAKE_BUILD_TYPE=Release \
	  -DPython3_EXECUTABLE=$(abspath $(PYTHON)) > $(CPP_BUILD).log 2>&1 || (cat $(CPP_BUILD).log; exit 1)
	cmake --build $(CPP_BUILD) --target trt-edge-run -j 1 > $(CPP_BUILD)-runner.log 2>&1 \
	  || (cat $(CPP_BUILD)-runner.log; exit 1)
	@echo "demo-runner: $(DEMO_RUNNER) is built"

# bench_llm_realsize.py builds real-size models (minutes each): `make bench` runs its quick
# mode (2 layers); `make bench BENCH_REALSIZE_ARGS="--layers 28"` runs the full shape.
BENCH_REALSIZE_ARGS ?= --quick
bench: setup demo-runner
	@for b in benchmarks/bench_*.py; do echo "== $$b"; \
	  case $$b in *bench_llm_realsize.py) args="$(BENCH_REALSIZE_ARGS)";; *) args="";; esac; \
	  $(PYTHON) $$b $$args || exit 1; done

# The images that build on this machine (needs a running Docker engine; the GPU
# images need their NVIDIA bases: `trt-edge images build x86-trt` on such a host).
# x86-rtx (TensorRT for RTX) builds here: its engines are built without a GPU.
images: setup sysdeps
	$(BIN)/trt-edge images build cpu
	$(BIN)/trt-edge images build cpu-runtime
	$(BIN)/trt-edge images build x86-rtx

clean:
	rm -rf site $(CPP_BUILD) $(CPP_BUILD).log $(CPP_BUILD)-runner.log $(CPP_SRC)/build-aarch64 $(CPP_SRC)/build-aarch64.log \
	  $(CPP_SRC)/build-x86_64 $(CPP_SRC)/build-x86_64.log .pytest_cache .mypy_cache .ruff_cache
