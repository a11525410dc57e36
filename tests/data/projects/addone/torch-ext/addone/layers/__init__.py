import torch


class AddOne(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from .. import add_one

        return add_one(x)
