# vtrecord — build, run, test.
#   make run ARGS="--test-pattern --duration 5s -o out.h264"
#   make test

SWIFT      ?= swift
PREFIX     ?= /usr/local
CONFIG     ?= release
ARGS       ?=
BIN        := .build/$(CONFIG)/vtrecord

# Debian packages the build, the program and the tests need.
DEB_PACKAGES := pkg-config libx264-dev libv4l-dev libva-dev libdrm-dev libyuv-dev libturbojpeg0-dev \
                ffmpeg x264 v4l-utils vainfo mandoc bc

.PHONY: all deps build run test bench clean

all: build

# Installs only what is missing; silent when everything is there.
deps:
	@missing=""; \
	for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	@command -v $(SWIFT) >/dev/null || { echo "swift is not on PATH: install a Swift 6 toolchain"; exit 1; }

build: deps
	$(SWIFT) build -c $(CONFIG)

# With no ARGS: ten seconds from /dev/video0, or of the test pattern when there is no camera,
# to a new file in the current directory.
run: build
	@if [ -z "$(ARGS)" ]; then \
	  if [ -e /dev/video0 ]; then $(BIN) --device /dev/video0 --duration 10s; \
	  else echo "no camera at /dev/video0: recording the test pattern"; $(BIN) --test-pattern --duration 10s; fi; \
	else \
	  $(BIN) $(ARGS); \
	fi

test: deps
	$(SWIFT) build
	$(SWIFT) test

# Speed against the x264 CLI, same input and settings, one run (not part of make test).
bench: build
	bench/encode-vs-x264.sh

clean:
	rm -rf .build
