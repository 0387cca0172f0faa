# vtrecord — build, run, test, install.
#   make run ARGS="--test-pattern --duration 5s -o out.h264"
#   make test
#   make install PREFIX=/usr/local      (DESTDIR for staging, as packagers use it)

SWIFT      ?= swift
PREFIX     ?= /usr/local
DESTDIR    ?=
CONFIG     ?= release
ARGS       ?=
# Extra flags for the release build of make install (the install test passes --ignore-lock).
SWIFT_BUILD_FLAGS ?=
# CONFIG=test is the build make test makes (TEST_BUILD_FLAGS, below), in a folder of its own:
# make install CONFIG=test, as the install test runs it, installs the tests' build instead of
# building everything again.
TEST_SCRATCH := .build-tests
CONFIG_FLAGS = $(if $(filter test,$(CONFIG)),$(TEST_BUILD_FLAGS),-c $(CONFIG))
BIN_DIR      = $(if $(filter test,$(CONFIG)),$(TEST_SCRATCH)/release,.build/$(CONFIG))
BIN          = $(BIN_DIR)/vtrecord

# Debian packages the build and the program need (make run, make install): the C libraries
# vtrecord links or loads (FFmpeg's libraries for Matroska, MPEG-TS, streams, sound and
# decoding; libcrypt for --http-auth's password hashes).
RUN_PACKAGES := pkg-config libx264-dev libv4l-dev libva-dev libdrm-dev libyuv-dev libturbojpeg0-dev \
                libavformat-dev libavcodec-dev libavutil-dev libswresample-dev libasound2-dev libcrypt-dev

# What the tests need besides (make test): programs vtrecord's authors did not write, to check
# its work with. They encode and decode with the ffmpeg and x264 CLIs, stand in a camera for
# v4l2-ctl and a microphone for arecord (alsa-utils), read containers back with mediainfo,
# mkvmerge and GStreamer, play them in headless Chromium from a Python loopback server, count a
# program's reads with strace, render the man page (mandoc, man-db), and run the README's
# recipes, one of which reads verify's JSON with jq; published streams are received on loopback
# by ffmpeg for SRT, RTSP and UDP, nginx's RTMP module (started by the tests themselves, never
# as a service), and SRT's own srt-live-transmit; --http's tests talk to it with curl, make
# hashes with openssl, parse /metrics with Prometheus' own Python client, drive Chromium over
# DevTools with python3-websocket and load it with fifty viewers through wrk; motion is the
# reference for motion detection; a disk whose fsync and unlink stall is a FUSE file system
# made with python3-fusepy; vainfo is the real client the fake VA-API driver is proven with.
TEST_PACKAGES := ffmpeg x264 v4l-utils vainfo mandoc man-db bc mediainfo gstreamer1.0-tools \
                 gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad \
                 gstreamer1.0-libav mkvtoolnix chromium python3 strace alsa-utils jq srt-tools \
                 nginx-light libnginx-mod-rtmp motion curl openssl python3-websocket \
                 python3-prometheus-client wrk python3-fusepy

# Debian packages only make bench needs: the peers it measures against (GStreamer's x264enc is
# in plugins-ugly, its Y4M reader in plugins-bad), callgrind, matplotlib for the chart
# (Debian's, so the bench runs with /usr/bin/python3), ustreamer for the live view's MJPEG. The
# publish family's loopback receivers (srt-live-transmit, nginx with its RTMP module) are in
# TEST_PACKAGES: the tests use them too.
BENCH_PACKAGES := gstreamer1.0-plugins-ugly valgrind python3-matplotlib ustreamer

.PHONY: all deps test-deps bench-deps build run test test-long test-sanitize fuzz bench soak install uninstall clean

all: build

# Installs those of the packages in $(1) that are missing; silent when everything is there.
define install_missing
	@missing=""; \
	for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

deps:
	$(call install_missing,$(RUN_PACKAGES))
	@command -v $(SWIFT) >/dev/null || { echo "swift is not on PATH: install a Swift 6 toolchain"; exit 1; }

test-deps: deps
	$(call install_missing,$(TEST_PACKAGES))

bench-deps:
	$(call install_missing,$(BENCH_PACKAGES))

build: deps
	$(SWIFT) build $(CONFIG_FLAGS)

# With no ARGS: ten seconds from /dev/video0, or of the test pattern when there is no camera,
# to a new file in the current directory.
run: build
	@if [ -z "$(ARGS)" ]; then \
	  if [ -e /dev/video0 ]; then $(BIN) --device /dev/video0 --duration 10s; \
	  else echo "no camera at /dev/video0: recording the test pattern"; $(BIN) --test-pattern --duration 10s; fi; \
	else \
	  $(BIN) $(ARGS); \
	fi

# The build (tests included) fails on a warning in vtrecord's code (Package.swift makes each
# one an error); a warning SwiftPM itself prints fails it here. The suite then runs as two
# lanes side by side (Tests/run-in-parallel.sh), since most of its tests wait on real time or
# on child processes while the CPU idles: the serialized camera tests, then half of the command
# line's other tests; the other tests that wait on real time (the stream tests with their
# receivers, relays and media servers; the container and sound trials, each suite one
# recording at a time), the modules' own tests, then the other half, with the tests of
# --encoder copy. (Three lanes made the run about five minutes shorter while this machine was
# fast; when it was a quarter slower, the camera and batch recordings beside two busy lanes
# missed frames and an encoder slower than the camera fell short, in every full run; a fourth
# lane did so before.) The slowest tests and suites, listed at the end of every run, say what
# to shorten. Then the tests that need
# both cores to themselves run on their own: those of --realtime adaptive, which check how the
# speed controller answers an encoder's cost; those of an encoder slower than the camera
# (x264 veryslow at 1080p, and the capture thread beside it must pass every frame on within a
# frame's time: with the lanes beside it, it missed the driver's buffers);
# and the 1080p recordings with stills, with three
# streams beside the file, with fifty viewers of the live stream, and four cameras' JPEGs
# stored by four processes at once (--encoder copy), that must drop nothing.
# Last, SRT through the lossy relay (5 % lost each way, 200 ms round trip) at latency=800,
# four round trips: a repaired packet must come in time, and beside the rest of the suite one
# came 2 ms late (at latency=500, which was then the tests').
# The tests' build is SwiftPM's release configuration made as a debug build is (-Onone, batch
# mode, C at -O0, testable modules, the index store the test discovery reads), in
# $(TEST_SCRATCH). A debug build defines DEBUG for every package, and swift-argument-parser
# then checks the whole command tree each time it builds an option group's argument set: most
# of the CPU of a debug vtrecord that starts and stops at once (0.25 s to start a recording,
# 1.1 s to refuse a bad option; 0.06 s and 0.1 s without), in a suite that starts vtrecord about
# 1,600 times. It builds in about the time of the debug build (415 s and 453 s from nothing here).
# test-long builds with the same flags, so neither rebuilds everything after the other.
TEST_BUILD_FLAGS := -c release --scratch-path $(TEST_SCRATCH) --enable-index-store \
                    -Xswiftc -Onone -Xswiftc -no-whole-module-optimization -Xswiftc -enable-batch-mode \
                    -Xswiftc -enable-testing -Xcc -O0 -Xcxx -O0
# SwiftPM's note that a dependency package ships a file it does not declare
# (swift-distributed-tracing, under Hummingbird) is about that package, not vtrecord's build.
# The driver's note that it ignores the release configuration's -num-threads is about the batch
# mode the tests' build asks for instead (TEST_BUILD_FLAGS).
FOREIGN_PACKAGE_WARNING := ^warning: 'swift-[a-z-]*': found [0-9]* file(s) which are unhandled
BATCH_MODE_WARNING := ^warning: ignoring -num-threads argument; cannot multithread batch mode
# The four cameras' test is not in the serialized CameraRecordingTests, so it runs after them,
# not beside them.
TEST_ALONE_COPY := fourFullHDCamerasAtOnceDropNothing
TEST_ALONE := AdaptiveSpeedTests|SlowEncoderTests|theSnapshotIsAlwaysAWholeJPEGAndCostsNoFrame|aFileAndThreeStreamsFromA1080pCameraDropNothing|fiftyViewersCostTheRecordingNothing|$(TEST_ALONE_COPY)
TEST_WAITING := PublishingTests|PublishingReceiverTests|StreamPeerProofTests|ContainerTrialTests|SoundCaptureTests|EventClipTests
TEST_QUIET := srtThroughALossyRelay|srtAtLatency800ThroughALossyLinkDecodesClean
# The first half of the command line's other suites; the second is whatever is left, so a new
# suite is never left out.
TEST_CLI_FIRST := VTRecordCLITests\.(BatchTests|BrowserPlaybackTests|CameraDiscoveryTests|CommandLineTests|DecoderSelectionTests|DecompressionSessionTests|DocumentationTests|FuzzCLITests|FuzzRegressionTests|HTTPServerTests|InstallTests|MP4OutputTests|MuxedOutputTests|OutputTests|PresetTests)/
# The capture module's own tests (the stand-in camera's and microphone's proofs, motion
# analysis: a third of the modules' time) end the first lane, which was 200 s shorter.
TEST_LANES := "--filter CameraRecordingTests --skip $(TEST_ALONE) ; --filter $(TEST_CLI_FIRST) ; --filter VTCaptureTests" \
              "--filter $(TEST_WAITING) --skip $(TEST_QUIET)|$(TEST_ALONE) ; --skip VTRecordCLITests|VTCaptureTests ; --filter VTRecordCLITests --skip CameraRecordingTests|$(TEST_WAITING)|$(TEST_CLI_FIRST)|$(TEST_ALONE)" \
              -- "--filter $(TEST_ALONE) --skip $(TEST_ALONE_COPY) ; --filter $(TEST_ALONE_COPY)" -- "--filter $(TEST_QUIET)"
test: test-deps
	@log=$$(mktemp); status=0; $(SWIFT) build --build-tests $(TEST_BUILD_FLAGS) >$$log 2>&1 || status=$$?; cat $$log; \
	if grep "warning:" $$log | grep -v -e "$(FOREIGN_PACKAGE_WARNING)" -e "$(BATCH_MODE_WARNING)" | grep -q .; then echo "the build printed a warning (above): vtrecord builds without any"; status=1; fi; \
	rm -f $$log; exit $$status
	@TEST_BIN_PATH="$(CURDIR)/$(TEST_SCRATCH)/release" Tests/run-in-parallel.sh $(TEST_LANES)

# Runs too long for make test: sound from a microphone 300 ppm fast and slow beside a camera
# for 340 s each (about 12 minutes), where uncorrected drift would pass 100 ms; a slow
# encoder behind the camera with every --buffers value (make test tries six); and three
# minutes of a live camera onto a 12 MB tmpfs under --keep-free.
test-long: test-deps
	$(SWIFT) build $(TEST_BUILD_FLAGS)
	VTRECORD_LONG=1 $(SWIFT) test $(TEST_BUILD_FLAGS) --filter 'syncHoldsForMinutesAt300PPM|aSlowHardwareEncoderDropsOnlyAtTheQueueWithEveryBufferCount|keepFreeHoldsForMinutesOnALiveCamera'

# The test suite under AddressSanitizer, then under ThreadSanitizer, each in a build of its
# own; the tests that run the binary run the sanitized one. Every report goes to a file under
# the build (log_path), so the findings of child processes are kept too, and is listed at the
# end. Slow (several times the plain suite); not part of make test. SANITIZE_FILTER narrows it
# (a swift test --filter pattern).
SANITIZERS      ?= address thread
SANITIZE_FILTER ?=
# ThreadSanitizer's own runtime dies of SIGBUS under the small RLIMIT_FSIZE these tests set
# (so does `vtrecord --version`), so they cannot run under it.
TSAN_SKIP       := fileSizeLimit(LeavesWholeAccessUnits|InASegment|OnTheFirstFrame)|outputFaultsLeaveAFileThatPlays
# The signal trials pause the fake camera in a phase for this long and expect a second signal
# to end the process inside the pause; a sanitized process takes longer than the plain 1 s.
SANITIZE_SIGNAL_PAUSE_MS := 5000
test-sanitize: test-deps
	@status=0; for s in $(SANITIZERS); do \
	  skip=""; \
	  case $$s in address) dir=.build-asan;; thread) dir=.build-tsan; skip="$(TSAN_SKIP)";; *) echo "unknown sanitizer $$s"; exit 2;; esac; \
	  rm -rf "$$dir/sanitizer-reports"; mkdir -p "$$dir/sanitizer-reports"; \
	  $(SWIFT) build --build-tests --sanitize=$$s --scratch-path $$dir || exit 1; \
	  VTRECORD_BIN="$(CURDIR)/$$dir/debug/vtrecord" \
	  VTRECORD_SIGNAL_PAUSE_MS=$(SANITIZE_SIGNAL_PAUSE_MS) \
	  ASAN_OPTIONS="log_path=$(CURDIR)/$$dir/sanitizer-reports/asan:detect_leaks=1" \
	  LSAN_OPTIONS="suppressions=$(CURDIR)/Tests/Sanitizers/lsan.supp:print_suppressions=0" \
	  TSAN_OPTIONS="log_path=$(CURDIR)/$$dir/sanitizer-reports/tsan:suppressions=$(CURDIR)/Tests/Sanitizers/tsan.supp:print_suppressions=0" \
	  $(SWIFT) test --skip-build --scratch-path $$dir $(if $(SANITIZE_FILTER),--filter '$(SANITIZE_FILTER)') \
	    $${skip:+--skip "$$skip"} || status=1; \
	  reports=$$(ls "$$dir/sanitizer-reports" | wc -l); \
	  echo "$$s sanitizer: $$reports report file(s) in $$dir/sanitizer-reports"; \
	  [ $$reports -eq 0 ] || status=1; \
	done; exit $$status

# libFuzzer targets for the readers of untrusted bytes (Fuzz/), each run for FUZZ_SECONDS with
# AddressSanitizer; the corpus grows in Fuzz/corpus, crashes land in Fuzz/artifacts. Not part
# of make test. --sanitize=fuzzer makes SwiftPM link libFuzzer's main instead of looking for
# the targets' own; a second --sanitize would replace it on the compiler's command line, so
# AddressSanitizer and the coverage instrumentation come in through -Xswiftc as one flag.
# A release build (checks stay on) runs about ten times as many inputs as a debug one.
FUZZ_SECONDS ?= 120
FUZZ_TARGETS ?=
fuzz: deps
	$(SWIFT) build -c release --package-path Fuzz --scratch-path .build-fuzz --sanitize=fuzzer \
	  -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing \
	  -Xcc -fsanitize=fuzzer-no-link,address -Xcxx -fsanitize=fuzzer-no-link,address
	FUZZ_SECONDS=$(FUZZ_SECONDS) Fuzz/run.sh $(FUZZ_TARGETS)

# Speed against the x264 CLI, ffmpeg and GStreamer, overhead, conversions, live capture and
# publishing (not part of make test); bench/run.py says what each family measures. QUICK=1 is a smoke
# run of a few minutes; RUNS, FRAMES, DURATION, NOISE, FAMILIES and OUT are passed through.
bench: build test-deps bench-deps
	$(SWIFT) build -c release --product vtrecord-bench
	/usr/bin/python3 bench/run.py

# An hour of recording with everything on (segments, SRT, event clips on motion, HTTP viewers),
# then the slope of its resident memory after a warm-up (goal: under 1 MiB an hour); not part
# of make test. bench/soak.py names its knobs (SOAK_SECONDS, SOAK_WARMUP, SOAK_SIZE…).
soak: build test-deps
	/usr/bin/python3 bench/soak.py

# Where make install puts things. The completion and unit directories are the ones
# bash-completion, zsh, fish and systemd look in under /usr/local and /usr.
INSTALLED_BIN   := $(BIN)
INSTALL_BIN     := $(DESTDIR)$(PREFIX)/bin
INSTALL_MAN     := $(DESTDIR)$(PREFIX)/share/man/man1
INSTALL_PRESETS := $(DESTDIR)$(PREFIX)/share/vtrecord/presets
INSTALL_BASH    := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
INSTALL_ZSH     := $(DESTDIR)$(PREFIX)/share/zsh/site-functions
INSTALL_FISH    := $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
INSTALL_UNIT    := $(DESTDIR)$(PREFIX)/lib/systemd/system
# Where earlier versions installed the HTTP server as a library of its own: uninstall still removes it.
INSTALL_LIB     := $(DESTDIR)$(PREFIX)/lib/vtrecord
PRESET_FILES    := $(wildcard presets/*.toml)

# A release build (CONFIG, release unless told otherwise: the install test installs the build
# make test has made, CONFIG=test, to spare the suite an optimized build of SwiftNIO and
# Hummingbird).
# The completion scripts come from the binary being installed (swift-argument-parser writes
# them from its own command tree), so they cannot drift from its options. The unit gets the prefix the binary really lives under.
install: deps
	$(SWIFT) build --product vtrecord $(CONFIG_FLAGS) $(SWIFT_BUILD_FLAGS)
	install -d "$(INSTALL_BIN)" "$(INSTALL_MAN)" "$(INSTALL_BASH)" "$(INSTALL_ZSH)" \
	  "$(INSTALL_FISH)" "$(INSTALL_UNIT)"
	install -m 755 $(INSTALLED_BIN) "$(INSTALL_BIN)/vtrecord"
	install -m 644 man/vtrecord.1 "$(INSTALL_MAN)/vtrecord.1"
ifneq ($(PRESET_FILES),)
	install -d "$(INSTALL_PRESETS)"
	install -m 644 $(PRESET_FILES) "$(INSTALL_PRESETS)/"
endif
	$(INSTALLED_BIN) --generate-completion-script bash > "$(INSTALL_BASH)/vtrecord"
	$(INSTALLED_BIN) --generate-completion-script zsh > "$(INSTALL_ZSH)/_vtrecord"
	$(INSTALLED_BIN) --generate-completion-script fish > "$(INSTALL_FISH)/vtrecord.fish"
	sed 's|@PREFIX@|$(PREFIX)|g' systemd/vtrecord@.service > "$(INSTALL_UNIT)/vtrecord@.service"
	chmod 644 "$(INSTALL_BASH)/vtrecord" "$(INSTALL_ZSH)/_vtrecord" "$(INSTALL_FISH)/vtrecord.fish" \
	  "$(INSTALL_UNIT)/vtrecord@.service"

# Removes the files install wrote and the one directory of vtrecord's own (share/vtrecord);
# directories shared with other programs stay.
uninstall:
	rm -f "$(INSTALL_BIN)/vtrecord" "$(INSTALL_LIB)/libvtrecord-http.so" "$(INSTALL_MAN)/vtrecord.1" "$(INSTALL_BASH)/vtrecord" \
	  "$(INSTALL_ZSH)/_vtrecord" "$(INSTALL_FISH)/vtrecord.fish" "$(INSTALL_UNIT)/vtrecord@.service"
	for f in $(notdir $(PRESET_FILES)); do rm -f "$(INSTALL_PRESETS)/$$f"; done
	rmdir "$(INSTALL_PRESETS)" "$(DESTDIR)$(PREFIX)/share/vtrecord" "$(INSTALL_LIB)" 2>/dev/null || true

clean:
	rm -rf .build
