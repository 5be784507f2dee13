"""Look inside artifacts before shipping them: `.pte` programs, TensorRT blobs, bundles.

Submodules, each with one job: `pte_reader` (the `.pte` structure via mmap),
`trt_blob` (Torch-TensorRT's TR01/TR02 delegate blob), `signatures` (cross-delegate
profile-signature check the build runs), `bundle` (bundle dir/tar + hash checks),
`report` (the JSON document and rich tree `trt-edge inspect` prints), `compare`
(what `trt-edge diff` shows). Nothing heavy is imported here: no torch, no executorch.
"""
