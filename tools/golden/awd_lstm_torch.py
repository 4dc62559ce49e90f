#!/usr/bin/env python3
"""The AWD-LSTM language model (salesforce/awd-lstm-lm's RNNModel with LSTM
cells and tied weights, rebuilt here from torch.nn modules) in eval mode,
where its dropouts are the identity, for tests/nn/models/awd_lstm_golden_test.cc:
from one set of float64 weights, the logits, each layer's final state, the
cross-entropy of the next tokens and every parameter's gradient, written in
our checkpoint format under our parameter names:

  python3 tools/golden/awd_lstm_torch.py tests/nn/models/testdata/awd_lstm_golden.tsckpt
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

from checkpoint_format import save_tensors

VOCAB, EMBEDDING, HIDDEN, LAYERS, STEPS, BATCH = 23, 6, 8, 3, 7, 4


class RNNModel(nn.Module):
    """awd-lstm-lm's model.py, LSTM type, tie_weights=True, without the
    dropouts (eval mode)."""

    def __init__(self):
        super().__init__()
        self.encoder = nn.Embedding(VOCAB, EMBEDDING)
        self.rnns = nn.ModuleList(
            nn.LSTM(EMBEDDING if l == 0 else HIDDEN, HIDDEN if l != LAYERS - 1 else EMBEDDING, 1)
            for l in range(LAYERS))
        self.decoder = nn.Linear(EMBEDDING, VOCAB)
        self.decoder.weight = self.encoder.weight

    def forward(self, ids, hidden):
        output, new_hidden = self.encoder(ids), []
        for rnn, state in zip(self.rnns, hidden):
            output, new_state = rnn(output, state)
            new_hidden.append(new_state)
        return self.decoder(output.view(-1, output.size(2))), new_hidden


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path")
    args = parser.parse_args()
    torch.manual_seed(0)
    model = RNNModel().double()
    ids = torch.randint(0, VOCAB, (STEPS + 1, BATCH))
    hidden = [(torch.randn(1, BATCH, rnn.hidden_size, dtype=torch.float64),
               torch.randn(1, BATCH, rnn.hidden_size, dtype=torch.float64)) for rnn in model.rnns]
    logits, final = model(ids[:-1], hidden)
    loss = F.cross_entropy(logits, ids[1:].reshape(-1))
    loss.backward()
    # Ours: decoder_bias for decoder.bias; the tied decoder.weight is encoder.weight.
    ours = {"decoder.bias": "decoder_bias"}
    named = [(f"init.{ours.get(n, n)}", p) for n, p in model.named_parameters()]
    named += [(f"grad.{ours.get(n, n)}", p.grad) for n, p in model.named_parameters()]
    named += [("ids", ids), ("logits", logits), ("loss", loss.reshape(1))]
    for l, ((h0, c0), (h, c)) in enumerate(zip(hidden, final)):
        named += [(f"h0.{l}", h0), (f"c0.{l}", c0), (f"h.{l}", h), (f"c.{l}", c)]
    save_tensors(args.path, named)
    print(f"wrote {args.path}: {len(named)} entries, loss {loss.item():.6f}, torch {torch.__version__}")


if __name__ == "__main__":
    main()
