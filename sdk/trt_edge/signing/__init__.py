"""Host-side signing of bundles: key generation, `bundle.sig` writing, verification.

Verification itself lives in `trt_edge_runner.signature` so the host's
`trt-edge verify` and the device's installer refuse exactly the same bundles.
"""

from trt_edge.signing.errors import SigningError
from trt_edge.signing.keys import KeyPair, generate_keypair, load_private_key
from trt_edge.signing.sign import sign_bundle, verify_bundle_with

__all__ = [
    "KeyPair",
    "SigningError",
    "generate_keypair",
    "load_private_key",
    "sign_bundle",
    "verify_bundle_with",
]
