#!/usr/bin/env bash
# audio-benchmark: `mediadevices-benchmark audio` (release build), every figure against a
# reference measured in the same run or the same boot of the rig:
#   host: the ring and the bus against memcpy, libsoxr against speexdsp;
#   rig (snd-aloop, a real PulseAudio, then a real PipeWire session, by scripts/sound-server.sh):
#     - the round trip through snd-aloop, our capture→render forwarding against arecord | aplay;
#     - CPU and wake-ups per second of `mediadevices record` against arecord (ALSA) and parec
#       (PulseAudio, PipeWire), same source, format and period (480 frames: 10 ms);
#     - the round trips through each server's null sink at 10 and 20 ms periods, ours against
#       pacat | parec and snd-aloop with the same periods (AudioPulseLatencyTests and
#       AudioPipeWireTests' round-trip test, from the debug test build).
# Extra arguments go to the host run (e.g. --periods 128,256). The figures go to out/ and, through
# scripts/benchmark-report.py, into docs/benchmarks.md (parts `audio` and `voice`) and its history.
#
#   scripts/audio-benchmark.sh voice: only the voice processing benchmark (issue 36): our echo
#   canceller against PulseAudio's module-echo-cancel (webrtc) on snd-aloop, ERLE, convergence
#   and CPU per 10 ms (DeviceTests.VoiceProcessingLoopbackTests/testBenchmarkAgainstPulseAudioEchoCancel),
#   from a release build of the test bundle in an instruction-timed rig boot (--icount, one vCPU).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/swift-environment.sh  # the toolchain on PATH, the same environment for SwiftPM in every script
mkdir -p out
# report PART FILE…: the part's figures into docs/benchmarks.md and its history (scripts/benchmark-report.py).
report() { local part=$1; shift; scripts/benchmark-report.py "$part" "$@"; }
if [[ ${1:-} == voice ]]; then
	# Its own scratch path: a release build with testing enabled is not the release build of the products.
	swift build -c release --build-tests -Xswiftc -enable-testing --scratch-path .build-release-tests >&2
	status=0
	scripts/rig.sh run --icount --cpus 1 --timeout 1500 -- \
		"$PWD/.build-release-tests/release/MediaDevicesPackageTests.xctest" DeviceTests.VoiceProcessingLoopbackTests/testBenchmarkAgainstPulseAudioEchoCancel \
		| tee out/benchmark-voice.log || status=$?
	(( status == 0 )) || { echo "audio-benchmark: the voice benchmark failed (status $status; out/benchmark-voice.log)" >&2; exit "$status"; }
	grep -E "^figure:|^ +(ours|theirs|module|WebRTC|default)|Test Case .* (passed|failed)" out/benchmark-voice.log >out/benchmark-voice.txt || true
	report voice out/benchmark-voice.txt
	exit 0
fi
swift build -c release --product mediadevices >&2
swift build -c release --product mediadevices-benchmark >&2
swift build --build-tests >&2
# The benchmark tool, and the command-line tool whose `record` it measures (MEDIADEVICES_TOOL).
release="$(swift build -c release --show-bin-path)"
bin="env MEDIADEVICES_TOOL=$release/mediadevices $release/mediadevices-benchmark"
tests="$(swift build --show-bin-path)/MediaDevicesPackageTests.xctest"
echo "audio-benchmark: ring, bus and resamplers (host)"
$bin audio --resampler "$@" | tee out/benchmark-audio-host.txt
echo "audio-benchmark: snd-aloop, PulseAudio and PipeWire (rig)"
status=0
scripts/rig.sh run --timeout 1800 -- /bin/bash -c "
	set -u
	export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp
	modprobe snd-aloop || exit 1
	quiet() { grep -v -E '^(underrun|overrun)!!!|^audio-benchmark: run'; }
	$bin audio --no-bus --latency --cpu hw:Loopback,1,0 2>&1 | quiet
	for server in pulseaudio pipewire; do
		started=\$($PWD/scripts/sound-server.sh \$server /tmp/audio-benchmark-\$server) || exit 1
		echo \"\$server: \$(echo \"\$started\" | grep '^seconds') to answer\"
		PULSE_SERVER=\$(echo \"\$started\" | awk '/^server/ { print \$2 }') $bin audio --no-bus --cpu pulse:mdsink.monitor 2>&1 | quiet
		kill -9 \$(echo \"\$started\" | awk '/^pid/ { print \$3 }')
	done
	$tests DeviceTests.AudioPulseLatencyTests,DeviceTests.AudioPipeWireTests/testRoundTripAt10And20MillisecondPeriodsAgainstPacatAndParec 2>&1 \
		| grep -E 'judged on attempt|error:|Executed .* tests'
" | tee out/benchmark-audio-rig.txt || status=$?
(( status == 0 )) || { echo "audio-benchmark: the rig part failed (status $status)" >&2; exit "$status"; }
report audio out/benchmark-audio-host.txt out/benchmark-audio-rig.txt
