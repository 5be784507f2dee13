"""Render an inspect document (report.py) as a rich tree for people.

Works only from the JSON document, so what people see and what `--json` prints can
never disagree.
"""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.tree import Tree


def human_bytes(n: int | None) -> str:
    if n is None:
        return "?"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _value(v: dict[str, Any]) -> str:
    if v.get("kind") != "tensor":
        return str(v.get("kind", "?"))
    shape = ", ".join(str(d) for d in v["shape"])
    dyn = v["dynamism"]
    note = "" if dyn == "static" else f"  [dim]{dyn}: shape is the upper bound[/dim]"
    return f"{v['dtype']}[{shape}]{note}"


def _trt(node: Tree, d: dict[str, Any]) -> None:
    if "tensorrt_error" in d:
        node.add(f"[red]TensorRT blob: {escape(d['tensorrt_error'])}[/red]")
        return
    t = d.get("tensorrt")
    if not t:
        return
    meta = t["metadata"]
    blob = node.add(
        f"TensorRT {t['magic']}: metadata {t['metadata_size']} B @ {t['metadata_offset']}, "
        f"engine {human_bytes(t['engine_size'])} @ {t['engine_offset']} "
        f"(aligned to {t['engine_alignment']})"
    )
    for b in meta["io_bindings"]:
        role = "in " if b["is_input"] else "out"
        blob.add(f"{role} {escape(b['name'])}: {b['dtype']}{b['shape']}")
    for a in meta["aliased_io"]:
        blob.add(f"alias {escape(a['output'])} → {escape(a['input'])} ({a['kind']})")
    settings = "present" if meta["serialized_metadata_present"] else "absent"
    blob.add(
        f"hardware_compatible={meta['hardware_compatible']} device_id={meta['device_id']} "
        f"target_platform={escape(meta['target_platform']) or '-'} "
        f"serialized settings {settings}"
    )


def pte_tree(doc: dict[str, Any], tree: Tree | None = None) -> Tree:
    title = (
        f"[bold]{escape(doc['path'])}[/bold]  {human_bytes(doc['file_size'])}, "
        f"{doc['file_identifier']} v{doc['version']}, program {human_bytes(doc['program_size'])}"
    )
    root = tree.add(title) if tree is not None else Tree(title)
    for m in doc["methods"]:
        node = root.add(
            f"method [bold]{escape(m['name'])}[/bold]  {m['instructions']} instructions, "
            f"planned memory {human_bytes(m['planned_bytes'])} {m['memory_planned']}"
        )
        ins = node.add("inputs")
        for i, v in enumerate(m["inputs"]):
            ins.add(f"{i}: {_value(v)}")
        outs = node.add("outputs")
        for i, v in enumerate(m["outputs"]):
            outs.add(f"{i}: {_value(v)}")
        if m["operators"]:
            node.add("operators: " + escape(", ".join(m["operators"])))
        if m["delegates"]:
            dels = node.add("delegates")
            for d in m["delegates"]:
                where = f"segment {d['data_index']}" if d["location"] == "segment" else "inline"
                dn = dels.add(
                    f"{d['index']}: [bold]{escape(d['backend_id'])}[/bold]  "
                    f"{human_bytes(d['blob_size'])}, {where} @ byte {d['offset']}"
                )
                _trt(dn, d)
    root.add(f"constants: {doc['constant_tensors']} tensors, {human_bytes(doc['constant_bytes'])}")
    if doc["named_data"]:
        root.add(
            f"named data: {len(doc['named_data'])} entries, {human_bytes(doc['named_data_bytes'])}"
        )
    if doc["mutable_bytes"]:
        root.add(f"mutable data: {human_bytes(doc['mutable_bytes'])}")
    if doc["segments"]:
        segs = root.add(f"segments ({len(doc['segments'])}) from byte {doc['segment_base_offset']}")
        for s in doc["segments"]:
            segs.add(f"{s['index']}: {s['role']}, {human_bytes(s['size'])} @ byte {s['offset']}")
    return root


def _shape(shape: list[int | str]) -> str:
    """`[1, seq]`: symbols unquoted, as people write them in the manifest."""
    return "[" + ", ".join(escape(str(d)) for d in shape) + "]"


def _ranges(p: dict[str, Any]) -> str:
    return ", ".join(
        f"{escape(sym)} {r['min']}..{r['max']} (opt {r['opt']})" for sym, r in p["dims"].items()
    )


def bundle_tree(doc: dict[str, Any]) -> Tree:
    model = doc["model"]
    root = Tree(
        f"[bold]bundle {escape(model['name'])} {escape(model['version'])}[/bold]  "
        f"({doc['container']}: {escape(doc['path'])}), backend {escape(doc['backend'])}"
    )
    target = root.add("target")
    for k, v in sorted(doc["target"].items()):
        target.add(f"{escape(str(k))}: {escape(str(v))}")
    quantization = doc.get("quantization")
    if quantization:
        fields = ", ".join(
            f"{k} {v}" for k, v in sorted(quantization.items()) if k != "scheme" and v is not None
        )
        root.add(f"quantization: {escape(str(quantization.get('scheme')))} ({escape(fields)})")
    else:
        root.add("quantization: none (fp32 weights)")
    io = doc["io"]
    ion = root.add(f"io: method {escape(str(io.get('method')))}")
    for t in io.get("inputs", []):
        values = f" values [{t['values'][0]}, {t['values'][1]})" if t.get("values") else ""
        ion.add(f"in  {escape(t['name'])}: {t['dtype']}{_shape(t['shape'])}{values}")
    for t in io.get("outputs", []):
        ion.add(f"out {escape(t['name'])}: {t['dtype']}{_shape(t['shape'])}")
    profiles = root.add(f"profiles ({len(doc['profiles'])})")
    for p in doc["profiles"]:
        profiles.add(f"{p['index']}: [bold]{escape(p['name'])}[/bold]  {_ranges(p)}")
    runtime = doc["runtime"]
    phases = ", ".join(f"{escape(k)} → {v}" for k, v in runtime.get("phases", {}).items())
    root.add(f"runtime policy: {runtime.get('policy')}; {phases}")
    memory = doc.get("memory")
    if memory:
        mem = root.add(f"memory at run time: {human_bytes(memory['total_bytes'])}")
        mem.add(f"weights: {human_bytes(memory['weights_bytes'])}")
        mem.add(
            f"planned: {human_bytes(memory['planned_bytes'])} "
            f"(KV cache {human_bytes(memory['kv_cache_bytes'])})"
        )
        mem.add(f"runner: {human_bytes(memory['runner_bytes'])}")
    else:
        root.add("memory at run time: not recorded (built before bundle.json had it)")
    if doc["delegates"]:
        dels = root.add(
            "delegates (profile signatures: "
            + (
                "[green]consistent[/green])"
                if doc["profile_signatures"] == "ok"
                else "[red]MISMATCH[/red])"
            )
        )
        for d in doc["delegates"]:
            sig = d.get("profile_signature")
            count = f", {sig.get('count')} profiles" if isinstance(sig, dict) else ""
            node = dels.add(
                f"{escape(d['method'])}[{d['index']}] {escape(d['backend_id'])} "
                f"{human_bytes(d['blob_size'])}{count}"
            )
            engine = d.get("engine")
            if isinstance(engine, dict):
                engine_tree(engine, node)
    if doc["provenance"]:
        prov = root.add("provenance")
        for k, v in sorted(doc["provenance"].items()):
            prov.add(f"{escape(str(k))}: {escape(str(v))}")
    files = root.add(
        "files: "
        + (
            "[green]every hash matches[/green]"
            if doc["hashes_ok"] and not doc.get("integrity")
            else "[red]INTEGRITY CHECK FAILED (a device refuses this bundle)[/red]"
        )
    )
    for f in doc["files"]:
        mark = "[green]✓[/green]" if f["status"] == "ok" else f"[red]✗ {f['status']}[/red]"
        files.add(
            f"{mark} {escape(f['name'])}  {human_bytes(f['expected_size'])} "
            f"sha256 {f['expected_sha256'][:16]}…"
        )
    listed = {f["name"] for f in doc["files"]}
    for problem in doc.get("integrity", []):
        if problem["path"] not in listed:
            files.add(
                f"[red]✗ {escape(problem['kind'])}[/red] {escape(problem['path'])}: "
                f"{escape(problem['detail'])}"
            )
    sig = doc["signature"]
    root.add(
        "signature: bundle.sig "
        + ("present (verify with `trt-edge verify`)" if sig["present"] else "absent (unsigned)")
    )
    if doc.get("pte_error"):
        root.add(f"[red]model.pte: {escape(doc['pte_error'])}[/red]")
    if doc["pte"] is not None:
        pte_tree(doc["pte"], root.add("model.pte"))
    return root


def engine_tree(engine: dict[str, Any], node: Tree) -> None:
    """One TensorRT engine's record: what built it for which GPUs, its profiles as the
    builder was given them, and the builder's memory report."""
    sms = ", ".join(engine["compute_capabilities"]) or "the GPU it was built on"
    node.add(
        f"engine: {escape(engine['flavour'])} {escape(engine['version'])}, "
        f"{human_bytes(engine['engine_bytes'])}, compute capability {sms}, "
        f"{escape(engine['precision'])}, profiles from the {escape(engine['source'])}"
    )
    for p in engine["profiles"]:
        shapes = "; ".join(
            f"{escape(n)} min {r['min']} opt {r['opt']} max {r['max']}"
            for n, r in p["shapes"].items()
        )
        node.add(f"profile {p['index']} {escape(p['name'])}: {shapes or 'static'}")
    weights = engine.get("weights_bytes")
    activations = ", ".join(human_bytes(a) for a in engine.get("activation_bytes", []))
    node.add(
        f"builder memory: weights {human_bytes(weights) if weights is not None else 'not reported'}"
        f"; activations per profile {activations or 'not reported'}"
    )


def render_tree(doc: dict[str, Any]) -> Tree:
    return bundle_tree(doc) if doc.get("kind") == "bundle" else pte_tree(doc)
