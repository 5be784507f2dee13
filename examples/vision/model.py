"""A small CNN classifier for batch-profile builds: [batch, 3, 32, 32] -> [batch, 10] logits.

Why this model: its output grows with the batch, so the largest output comes
from the last profile (batch 9..32), not profile 0 — the case ExecuTorch must
plan memory for (outputs sized at the union envelope). Weights come from a
fixed seed so builds are reproducible without downloads.
"""

from __future__ import annotations

import torch
from torch import nn

CLASSES = 10
SEED = 20261130


class TinyCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.Conv2d(8, 16, kernel_size=3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 32, kernel_size=3, stride=2, padding=1),
            nn.ReLU(),
        )
        self.head = nn.Linear(32, CLASSES)

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        x = self.features(image)
        x = x.mean(dim=(2, 3))  # global average pool: [batch, 32]
        logits: torch.Tensor = self.head(x)
        return logits


def build_model() -> nn.Module:
    """The manifest's entrypoint: deterministic weights, eval mode."""
    torch.manual_seed(SEED)
    generator = torch.Generator().manual_seed(SEED)
    model = TinyCNN()
    with torch.no_grad():
        for param in model.parameters():
            param.copy_(torch.randn(param.shape, generator=generator) * 0.3)
    return model.eval()
