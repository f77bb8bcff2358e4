"""``astcompiler.nn``: torch.nn-style modules written in plain NumPy.

``Module`` has torch.nn.Module's surface (registration of parameters, buffers and submodules,
iteration, train/eval, state_dict/load_state_dict, forward hooks and state-dict hooks); the
layers' ``forward`` methods are plain NumPy code a source-rewriting compiler can capture.
Imports only NumPy and the standard library. See docs/modules.md.
"""

from . import functional, modules
from .hooks import RemovableHandle
from .modules import (GELU, Dropout, Embedding, Identity, LayerNorm, Linear, Module, ModuleDict,
                      ModuleList, ReLU, Sequential, Sigmoid, Softmax, Tanh)
from .parameter import Parameter

__all__ = ["Dropout", "Embedding", "GELU", "Identity", "LayerNorm", "Linear", "Module",
           "ModuleDict", "ModuleList", "Parameter", "ReLU", "RemovableHandle", "Sequential",
           "Sigmoid", "Softmax", "Tanh", "functional", "modules"]
