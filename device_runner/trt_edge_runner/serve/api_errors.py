"""The one error a request can end in, rendered the same way by every route.

A route raises `ApiError` (status, message, the request field at fault, the metrics
outcome); the app renders it as the protocol's error body — OpenAI's
`{"error": {"message", "type", "param", "code"}}` under `/v1`, KServe's `{"error": "..."}`
under `/v2` — and never as a traceback.
"""

from __future__ import annotations

from trt_edge_runner.errors import EXIT_BAD_INPUT, EXIT_FAILED, TrtEdgeError, Where

# Outcomes of `trt_edge_requests_total` (metrics.OUTCOMES), one per way a request can end.
OK = "ok"
BAD_REQUEST = "bad_request"
REJECTED = "rejected"
DEADLINE = "deadline"
ENGINE_ERROR = "engine_error"
CANCELLED = "cancelled"


class ApiError(TrtEdgeError):
    """A request that ends without a result: HTTP `status`, what happened, the field at fault.

    One of the project's errors (the one root), though it never reaches a command line.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        field: str | None = None,
        outcome: str = BAD_REQUEST,
        kind: str = "invalid_request_error",
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(
            message,
            where=Where(field=field) if field else None,
            exit_code=EXIT_BAD_INPUT if 400 <= status < 500 else EXIT_FAILED,
        )
        self.status = status
        self.message = message
        self.field = field
        self.outcome = outcome
        self.kind = kind
        self.headers = headers or {}

    def text(self) -> str:
        """The message with the field in front, as a person reads it."""
        return f"{self.field}: {self.message}" if self.field else self.message


def bad_field(field: str, message: str) -> ApiError:
    """A 400 naming `field` (a malformed body or a parameter out of range)."""
    return ApiError(400, message, field=field)
