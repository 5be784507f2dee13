"""The Hugging Face causal-LM recipe: a save_pretrained folder → one method, KV cache inside.

`StaticCacheLM.forward(input_ids [1, seq], cache_position [seq]) -> logits [1, vocab]`
serves prefill (seq = prompt length) and decode (seq = 1). The per-layer key/value
caches are module buffers written in place, which torch.export records as mutated
buffers and ExecuTorch keeps in the loaded method's planned memory across calls:
no cache tensor crosses the method boundary.

One job per module: `loading` (folder → eager model, offline), `static_cache`
(the wrapper and its masks), `attention` and `rewrites` (exact re-expressions that
keep XNNPACK partitions whole), `xnnpack_pass` (the edge-dialect graph pass),
`export` and `lowering` (the stages' recipe halves), `tokenizer` (what the bundle
carries for text), `generation` (the greedy loop over a bundle), `reference`
(eager transformers to compare with) and `validation` (the build's checks).
Nothing here is imported unless a manifest names a `model.huggingface` folder.
"""
