# agentrl build. The cgo flags live here and only here: every target uses
# them, so the (slow, ~2-10 min) first build of llama.cpp/ggml is cached and
# reused. Override CPU_FLAGS for portable binaries, e.g.
#   make build CPU_FLAGS="-mavx2 -mfma -mf16c"
CPU_FLAGS ?= -march=native
CGO_CFLAGS := -O3 $(CPU_FLAGS)
CGO_CXXFLAGS := -O3 $(CPU_FLAGS)
CGO_ENABLED := 1
export CGO_CFLAGS CGO_CXXFLAGS CGO_ENABLED

GO ?= go
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
BIN := bin/agentrl
OUT ?= out

# Packages that do not link llama.cpp: they also run under the race detector.
PURE_GO_PKGS = $(shell $(GO) list -f '{{.ImportPath}} {{join .Deps " "}}' ./... | grep -v 'github.com/agentrl/agentrl/cgo' | cut -d' ' -f1)

.PHONY: build test test-short vet demo bench clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/agentrl

vet:
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi

test: vet
	$(GO) test -count=1 -timeout 30m ./...
	$(GO) test -count=1 -race -timeout 20m $(PURE_GO_PKGS)

demo: build
	@mkdir -p $(OUT)
	./$(BIN) init-model --preset tiny --seed 1 --out $(OUT)/tiny.gguf
	./$(BIN) generate --model $(OUT)/tiny.gguf --prompt "Action:" --n 3 --max-tokens 24 --temperature 0.8 --seed 1

bench: build
	./$(BIN) bench infer --json

clean:
	rm -rf bin $(OUT)
	$(GO) clean -testcache
