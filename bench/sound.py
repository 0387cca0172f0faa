"""What sound costs: a 1080p30 YUYV recording from the fake camera (as the live family records
it: --speed veryfast, a ring of noisy pictures) into MP4, with and without 48 kHz stereo AAC
from the fake microphone (Tests/FakeALSA, through libasound as from a sound card), the two
alternating RUNS times. Reported: the whole process's CPU with and without (medians), their
difference as a share of one core, and the audio thread's own CPU time from the summary
(`audio.cpu_seconds`: reading, converting and encoding the sound, measured where it is spent,
so the machine's noise does not blur it), less what the fake microphone itself spends making
its samples in that thread (measured with arecord, as the live family measures the fake
camera with v4l2-ctl). The goal is under 3 % of one core.
"""

import json
import os
from pathlib import Path

from common import ROOT, ToolFailed, measure, median, note, run
from live import DEVICE, build_fake_camera, camera_environment

WIDTH, HEIGHT, RATE, SPEED = 1920, 1080, 30, "veryfast"
MICROPHONE = "benchmic"


def build_fake_microphone(work: Path):
    """Compiles the fake microphone as VTTestSupport's FakeALSALibrary does, into the bench's
    own directory, and writes an ALSA configuration with one microphone at 48 kHz."""
    library = work / "libasound_module_pcm_vtfake.so"
    partial = work / "libasound_module_pcm_vtfake.so.partial"
    sources = sorted(str(p) for p in (ROOT / "Tests/FakeALSA").glob("*.c"))
    alsa = run(["pkg-config", "--cflags", "--libs", "alsa"]).split()
    run(["cc", "-std=c11", "-shared", "-fPIC", "-DPIC", "-O2", "-Wall", "-Wextra", "-Wl,-z,nodelete", "-o", partial,
         "-I", ROOT / "Tests/TestDoubles", *sources, *alsa, "-lm", "-lpthread"])
    partial.rename(library)
    config = work / "asound.conf"
    # A room's hiss under a quiet tone and the beeps: what a codec codes from a real
    # microphone (a pure tone alone makes FFmpeg's AAC encoder work twice as hard).
    config.write_text(f'pcm_type.vtfake {{ lib "{library}" }}\n'
                      f'pcm.{MICROPHONE} {{ type vtfake rates [48000] channels [2] ppm 100 '
                      f'tone_level -30 noise_level -45 }}\n')
    return config


def microphone_alone(knobs, env):
    """CPU the fake microphone spends per second of wall time making its samples for a client
    that does nothing with them (arecord): work a sound card does in hardware, inside the
    recording process here, so it is taken out of the audio thread's figure."""
    usage = measure(["arecord", "-q", "-D", MICROPHONE, "-f", "S16_LE", "-r", "48000", "-c", "2",
                     "-d", str(knobs.live_seconds), "/dev/null"], knobs.work / "arecord.log", env=env)
    return usage.cpu / usage.wall


def record(knobs, env, with_sound, index):
    output = knobs.work / f"sound-{index}.mp4"
    summary = knobs.work / f"sound-{index}.json"
    argv = [knobs.vtrecord, "--device", DEVICE, "--size", f"{WIDTH}x{HEIGHT}", "--fps", RATE, "--format", "yuyv",
            "--speed", SPEED, "--encoder", "x264", "--duration", f"{knobs.live_seconds}s",
            "-o", output, "--overwrite", "--quiet", "--json-summary", summary]
    if with_sound:
        argv += ["--audio", MICROPHONE, "--audio-codec", "aac", "--audio-rate", "48000", "--audio-channels", "2"]
    usage = measure(argv, knobs.work / "sound.log", env=env)
    facts = json.loads(summary.read_text())
    if facts.get("stop_reason") != "duration":
        raise ToolFailed(f"sound: stopped by {facts.get('stop_reason')}: {facts.get('error')}")
    output.unlink()
    return usage, facts


def bench(knobs):
    if Path(DEVICE).exists():
        raise SystemExit(f"{DEVICE} exists: the fake camera needs a path that is not on disk")
    camera = build_fake_camera(knobs.work)
    env = camera_environment(camera, knobs.work / "sound-camera-report.txt", knobs.noise)
    env["ALSA_CONFIG_PATH"] = str(build_fake_microphone(knobs.work))
    without, with_sound, audio_cpu, alone = [], [], [], []
    dropped = {False: 0, True: 0}
    for index in range(knobs.runs):
        for sound in (False, True):
            note(f"sound: 1080p{RATE} yuyv, {SPEED}, {knobs.live_seconds} s, "
                 f"{'with' if sound else 'without'} AAC, run {index + 1} of {knobs.runs}")
            usage, facts = record(knobs, env, sound, index)
            (with_sound if sound else without).append(usage.cpu / usage.wall)
            dropped[sound] += facts["dropped_queue"] + facts["dropped_driver"]
            if sound:
                audio = facts["audio"]
                if audio["codec"] != "aac" or audio["rate"] != 48000 or audio["channels"] != 2:
                    raise ToolFailed(f"sound: recorded {audio}")
                audio_cpu.append(audio["cpu_seconds"] / usage.wall)
        note(f"sound: the fake microphone alone (arecord), {knobs.live_seconds} s, run {index + 1} of {knobs.runs}")
        alone.append(microphone_alone(knobs, env))
    return [{
        "size": "1080p", "fps": RATE, "format": "yuyv", "speed": SPEED, "seconds": knobs.live_seconds,
        "runs": knobs.runs, "sound": "AAC-LC 48000 Hz stereo 128 kb/s from the fake microphone",
        "cpu_percent_without": 100 * median(without), "cpu_percent_with": 100 * median(with_sound),
        "cpu_percent_difference": 100 * (median(with_sound) - median(without)),
        "audio_thread_cpu_percent": 100 * median(audio_cpu),
        "fake_microphone_cpu_percent": 100 * median(alone),
        "sound_cpu_percent": 100 * (median(audio_cpu) - median(alone)),
        "dropped_frames_without": dropped[False], "dropped_frames_with": dropped[True],
    }]
