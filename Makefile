# agentrl build. The cgo flags live here and only here: every target uses
# them, so the (slow, ~2-10 min) first build of llama.cpp/ggml is cached and
# reused. Override CPU_FLAGS for portable binaries, e.g.
#   make build CPU_FLAGS="-mavx2 -mfma -mf16c"
CPU_FLAGS ?= -march=native
# On x86-64 processors with AMX (Intel Sapphire Rapids and later),
# -march=native makes ggml's CPU backend call its AMX buffer type, whose
# sources (ggml-cpu/amx/) the pinned module does not build through cgo: the
# link fails. AMX only speeds up quantised products; turn it off.
ifeq ($(shell uname -m),x86_64)
NO_AMX := -mno-amx-int8 -mno-amx-tile -mno-amx-bf16
endif
CGO_CFLAGS := -O3 $(CPU_FLAGS) $(NO_AMX)
CGO_CXXFLAGS := -O3 $(CPU_FLAGS) $(NO_AMX)
CGO_ENABLED := 1
export CGO_CFLAGS CGO_CXXFLAGS CGO_ENABLED

GO ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
BIN := bin/agentrl
OUT ?= out

# Packages that do not link llama.cpp, tests included: they also run under
# the race detector (a race build of llama.cpp would take minutes) and are
# vetted for darwin without cgo. go list -test lists each package's test
# variants (PKG [PKG.test], PKG_test, PKG.test) with their dependencies.
PURE_GO_PKGS = $(shell $(GO) list -test -f '{{.ImportPath}} {{join .Deps " "}}' ./... | \
	awk '{ p = $$1; sub(/(\.test|_test)$$/, "", p); if ($$0 ~ /agentrl\/cgo( |$$)/) bad[p] = 1; else all[p] = 1 } \
	END { for (p in all) if (!(p in bad)) print p }' | sort)

.PHONY: build test vet demo bench clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/agentrl

vet:
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi

test: vet
	$(GO) test -count=1 -timeout 30m ./...
	$(GO) test -count=1 -race -timeout 20m $(PURE_GO_PKGS)

demo: build
	./$(BIN) demo --out $(OUT)

bench: build
	./$(BIN) bench infer --json
	./$(BIN) bench envs --json
	./$(BIN) bench train --full --json

clean:
	rm -rf bin lib $(OUT)
	$(GO) clean -testcache

# GPU backends and checks (docs/gpu.md).
#
# make cuda: the CUDA backend (libggml-cuda.so and the libggml-base.so.0 it
# links) into lib/agentrl, where bin/agentrl looks for it. Needs CMake and
# nvcc. CUDA_ARCHITECTURES is CMake's list, e.g. "90" or "80-real;90";
# empty means the local GPUs' (nvidia-smi), else a portable list.
CUDA_ARCHITECTURES ?=
CUDA_IMAGE ?= agentrl:cuda
# The CPU flags of the binary gpu-bundle ships: any x86-64 with AVX2.
GPU_BUNDLE_CPU_FLAGS = -mavx2 -mfma -mf16c

.PHONY: cuda docker-cuda gpu-bundle check-darwin

cuda:
	scripts/build-ggml-backend.sh --backend cuda --lib-dir lib/agentrl $(if $(CUDA_ARCHITECTURES),--cuda-arch '$(CUDA_ARCHITECTURES)')

docker-cuda:
	docker build -f Dockerfile.cuda -t $(CUDA_IMAGE) --build-arg VERSION=$(VERSION) $(if $(CUDA_ARCHITECTURES),--build-arg CUDA_ARCHITECTURES='$(CUDA_ARCHITECTURES)') .

# gpu/: what scripts/gpu-bench.sh needs on a GPU machine without Go or
# network access: a portable binary, the model maker, the ggml sources of the
# pinned module and the scripts. Run there as gpu/scripts/gpu-bench.sh.
gpu-bundle:
	$(MAKE) build CPU_FLAGS="$(GPU_BUNDLE_CPU_FLAGS)" BIN=gpu/bin/agentrl
	CGO_ENABLED=0 $(GO) build -o gpu/bin/shapedmodel ./scripts/shapedmodel
	rm -rf gpu/ggml gpu/scripts
	cp -R "$$($(GO) list -m -f '{{.Dir}}' github.com/ollama/ollama)/ml/backend/ggml/ggml" gpu/ggml
	chmod -R u+w gpu/ggml
	# CMake needs none of the module's cgo wrappers, and inside this
	# repository they would become packages of ./...
	find gpu/ggml -name '*.go' -delete
	mkdir -p gpu/scripts
	cp -R scripts/gpu-bench.sh scripts/gpu_bench.py scripts/build-ggml-backend.sh scripts/ggml-backend gpu/scripts/
	@du -sh gpu

# What CI can check of the macOS build without Apple's toolchain: the pure-Go
# packages vet for darwin/arm64, and the cgo build there includes Metal.
check-darwin:
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) vet $(PURE_GO_PKGS)
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=1 $(GO) list -deps ./cmd/agentrl | grep -qx 'github.com/ollama/ollama/ml/backend/ggml/ggml/src/ggml-metal'
