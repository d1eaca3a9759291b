"""Test helpers shared by several test files: a tiny config, and the ALTeGraD lab's model in plain `torch.nn`
(the reference our `altegrad-lab` preset must match, and the source of the lab checkpoints the converter reads)."""

from __future__ import annotations

import math

import torch
from torch import nn

from hf_models import SmallEncoderConfig


def tiny_config(attention_type: str = "vanilla", **overrides) -> SmallEncoderConfig:
    """A 2-layer, 32-wide `cs224n-mingpt` config with a 61-token vocabulary and ℓ = 24."""
    values = dict(
        vocab_size=61,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=24,
        attention_type=attention_type,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
    )
    values.update(overrides)
    return SmallEncoderConfig.from_preset("cs224n-mingpt", **values)


# The lab's `Model`: base (TransformerModel) + classifier (ClassificationHead with `decoder`).
class LabPositionalEncoding(nn.Module):
    def __init__(self, d_model: int, max_len: int = 5000):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1))  # [max_len, 1, d]: saved in the state dict

    def forward(self, x):
        return x + self.pe[: x.size(0), :]


class LabTransformerModel(nn.Module):
    """The lab's base: Embedding ×√d, sinusoidal PE, nn.TransformerEncoder with the square subsequent mask."""

    def __init__(self, ntoken: int = 50001, nhead: int = 2, nhid: int = 200, nlayers: int = 4, dropout: float = 0.0):
        super().__init__()
        self.ninp = nhid
        self.encoder = nn.Embedding(ntoken, nhid)
        self.pos_encoder = LabPositionalEncoding(nhid)
        layer = nn.TransformerEncoderLayer(nhid, nhead, nhid, dropout=dropout)
        self.transformer_encoder = nn.TransformerEncoder(layer, nlayers, enable_nested_tensor=False)

    def forward(self, src):  # src: [L, B]
        mask = nn.Transformer.generate_square_subsequent_mask(src.size(0))
        return self.transformer_encoder(self.pos_encoder(self.encoder(src) * math.sqrt(self.ninp)), mask)


class LabClassificationHead(nn.Module):
    def __init__(self, nhid: int, nclasses: int):
        super().__init__()
        self.decoder = nn.Linear(nhid, nclasses)

    def forward(self, src):
        return self.decoder(src)


class LabModel(nn.Module):
    def __init__(self, ntoken: int, nhead: int, nhid: int, nlayers: int, nclasses: int):
        super().__init__()
        self.base = LabTransformerModel(ntoken, nhead, nhid, nlayers)
        self.classifier = LabClassificationHead(nhid, nclasses)

    def forward(self, src):  # [L, B] -> [L, B, nclasses]
        return self.classifier(self.base(src))
