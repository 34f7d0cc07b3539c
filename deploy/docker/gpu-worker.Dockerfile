# syntax=docker/dockerfile:1
# A KernelSeek GPU worker: `kernelseek gpu-worker` on an official CUDA image with the harness's
# Python packages pinned (deploy/gpu-worker/requirements.txt) and bubblewrap for gpu_bash.
# Build from the repository root:  docker build -f deploy/docker/gpu-worker.Dockerfile -t kernelseek-gpu-worker .
# Run with the NVIDIA Container Toolkit (--gpus all); docs/deploy.md, "A GPU host".

# --- build: the same Node build as the server image ---
FROM node:20.19.5-bookworm-slim AS build
WORKDIR /opt/kernelseek
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm ci --no-audit --no-fund --loglevel=error \
 && npm prune --omit=dev --no-audit --no-fund

# --- runtime: CUDA 13.0 toolkit (nvcc, CUPTI) on Ubuntu 24.04 (Python 3.12) ---
FROM nvidia/cuda:13.0.2-devel-ubuntu24.04
ENV DEBIAN_FRONTEND=noninteractive
# python3-venv: the harness's packages in a virtual environment of their own; g++: cpu tasks and
# nvcc's host compiler; bubblewrap and util-linux: the sandbox of gpu_bash commands; tini: signals.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv g++ make bubblewrap util-linux git ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*
# Node 20 from the build stage (the same binary the server image runs).
COPY --from=build /usr/local/bin/node /usr/local/bin/node
COPY deploy/gpu-worker/requirements.txt /tmp/requirements.txt
# PyTorch's CUDA 13.0 wheels come from PyTorch's own index; the rest from PyPI.
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cu130 -r /tmp/requirements.txt \
 && rm /tmp/requirements.txt
RUN groupadd --system --gid 10001 kernelseek \
 && useradd --system --uid 10001 --gid kernelseek --home-dir /var/lib/kernelseek --create-home --shell /usr/sbin/nologin kernelseek
WORKDIR /opt/kernelseek
COPY --from=build /opt/kernelseek/node_modules ./node_modules
COPY --from=build /opt/kernelseek/dist ./dist
# The same files as the server image: the harness version is a digest of harness/, and a worker
# takes only the jobs of its own version.
COPY package.json ./
COPY bin ./bin
COPY harness ./harness
COPY kernels ./kernels
COPY questions ./questions
COPY migrations ./migrations
COPY slack ./slack
ENV PATH=/opt/venv/bin:/usr/local/cuda/bin:/usr/local/bin:/usr/bin:/bin \
    KERNELSEEK_PYTHON=/opt/venv/bin/python3 \
    KERNELSEEK_NVCC=/usr/local/cuda/bin/nvcc \
    CUDA_HOME=/usr/local/cuda \
    KERNELSEEK_DATA_DIR=/var/lib/kernelseek
USER kernelseek
VOLUME ["/var/lib/kernelseek"]
# A worker is healthy while its heartbeat is listed; `kernelseek doctor --role gpu-worker` checks the host.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/opt/kernelseek/bin/kernelseek.js"]
CMD ["gpu-worker"]
