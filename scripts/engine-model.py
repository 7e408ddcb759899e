#!/usr/bin/python3
"""Writes the tiny deterministic random-weight llama model make engine-test serves.

Usage: engine-model.py LLAMA_CPP_DIR OUT.gguf

The weights are drawn from numpy's PCG64 with a fixed seed, so the same
gguf-py writes the same bytes. The tokenizer (SentencePiece, 32,000 tokens)
is copied from the llama.cpp checkout's models/ggml-vocab-llama-spm.gguf and
a chat template is added. Byte and control tokens get zero output rows, so
with top-k sampling the model emits whole tokens, each a text delta of its
own (one streamed chunk per generated token).
"""
import sys
from pathlib import Path

import numpy as np

root = Path(sys.argv[1])
out = Path(sys.argv[2])
sys.path.insert(0, str(root / "gguf-py"))
import gguf  # noqa: E402  (llama.cpp's own writer, from the checkout)

VOCAB = root / "models" / "ggml-vocab-llama-spm.gguf"
N_EMBD, N_HEAD, N_HEAD_KV, N_LAYER, N_FF, N_CTX = 64, 4, 4, 2, 128, 4096
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% else %}{{ message['content'] + eos_token }}{% endif %}{% endfor %}"
)

vocab = gguf.GGUFReader(VOCAB)


def field(name):
    return vocab.fields[name].contents()


tokens = field("tokenizer.ggml.tokens")
scores = field("tokenizer.ggml.scores")
types = field("tokenizer.ggml.token_type")
n_vocab = len(tokens)

w = gguf.GGUFWriter(str(out), "llama")
w.add_name("benchseal-tiny-random-llama")
w.add_description("random weights (numpy PCG64 seed 25), for measuring a server, not a language model")
w.add_context_length(N_CTX)
w.add_embedding_length(N_EMBD)
w.add_block_count(N_LAYER)
w.add_feed_forward_length(N_FF)
w.add_head_count(N_HEAD)
w.add_head_count_kv(N_HEAD_KV)
w.add_rope_dimension_count(N_EMBD // N_HEAD)
w.add_layer_norm_rms_eps(1e-5)
w.add_vocab_size(n_vocab)
w.add_file_type(gguf.LlamaFileType.ALL_F32)
w.add_tokenizer_model(field("tokenizer.ggml.model"))
w.add_tokenizer_pre(field("tokenizer.ggml.pre"))
w.add_token_list(tokens)
w.add_token_scores(scores)
w.add_token_types(types)
w.add_bos_token_id(field("tokenizer.ggml.bos_token_id"))
w.add_eos_token_id(field("tokenizer.ggml.eos_token_id"))
w.add_unk_token_id(field("tokenizer.ggml.unknown_token_id"))
w.add_add_bos_token(bool(field("tokenizer.ggml.add_bos_token")))
w.add_add_eos_token(bool(field("tokenizer.ggml.add_eos_token")))
w.add_chat_template(CHAT_TEMPLATE)

rng = np.random.Generator(np.random.PCG64(25))


def mat(rows, cols, scale):
    return (rng.standard_normal((rows, cols), dtype=np.float32) * np.float32(scale)).astype(np.float32)


ones = np.ones(N_EMBD, dtype=np.float32)
w.add_tensor("token_embd.weight", mat(n_vocab, N_EMBD, 1.0))
w.add_tensor("output_norm.weight", ones)
outw = mat(n_vocab, N_EMBD, 1.0)
normal = np.array([t == int(gguf.TokenType.NORMAL) for t in types])
outw[~normal] = 0.0
w.add_tensor("output.weight", outw)
for i in range(N_LAYER):
    p = f"blk.{i}."
    w.add_tensor(p + "attn_norm.weight", ones)
    w.add_tensor(p + "attn_q.weight", mat(N_EMBD, N_EMBD, 0.1))
    w.add_tensor(p + "attn_k.weight", mat(N_EMBD * N_HEAD_KV // N_HEAD, N_EMBD, 0.1))
    w.add_tensor(p + "attn_v.weight", mat(N_EMBD * N_HEAD_KV // N_HEAD, N_EMBD, 0.1))
    w.add_tensor(p + "attn_output.weight", mat(N_EMBD, N_EMBD, 0.1))
    w.add_tensor(p + "ffn_norm.weight", ones)
    w.add_tensor(p + "ffn_gate.weight", mat(N_FF, N_EMBD, 0.1))
    w.add_tensor(p + "ffn_up.weight", mat(N_FF, N_EMBD, 0.1))
    w.add_tensor(p + "ffn_down.weight", mat(N_EMBD, N_FF, 0.1))

tmp = out.with_suffix(out.suffix + ".tmp")
w.path = tmp
w.write_header_to_file(tmp)
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
tmp.rename(out)
