"""Typed errors of reading and inspecting `.pte` files, TensorRT blobs and bundles.

Every reader here raises an `InspectError` subclass (under the one root,
`trt_edge_runner.errors`) with a message that names the file, the place inside it
and what to do, so the CLI prints it and exits 2 (an artifact that cannot be read
is bad input) instead of showing a traceback, and callers (the build) can tell a
broken `.pte` from a broken TensorRT blob from a profile-signature disagreement.
"""

from __future__ import annotations

from trt_edge_runner.errors import EXIT_BAD_INPUT, TrtEdgeError


class InspectError(TrtEdgeError):
    """Base of every error raised while reading or comparing artifacts."""

    exit_code = EXIT_BAD_INPUT


class PteFormatError(InspectError):
    """A `.pte` file is truncated, has a bad header or an out-of-range reference."""


class TrtBlobError(InspectError):
    """A Torch-TensorRT ExecuTorch delegate blob (TR01/TR02) is malformed."""


class BundleInspectError(InspectError):
    """A bundle directory or `.tar` is missing files or has an unreadable `bundle.json`."""


class ProfileSignatureError(InspectError):
    """Base of profile-signature problems: malformed signatures and disagreements."""


class MalformedProfileSignature(ProfileSignatureError):
    """A recorded profile signature does not have the documented shape."""


class ProfileSignatureMismatch(ProfileSignatureError):
    """Two multi-profile TensorRT delegates of one method disagree on what an index means."""
