"""The targets from the plan, judged on the figures; the printed table; the chart."""

from common import geometric_mean

# A live run's memory counts as flat when it grew by at most this share from the start sample.
RSS_GROWTH_LIMIT = 0.05
# MP4 finalization: the 16-byte mdat header plus a little slack; the hour-long file's time.
FINALIZE_EXTRA_BYTES = 4096
FINALIZE_MS_LIMIT = 100


def target(name, goal, measured, passed, criterion):
    return {"name": name, "target": goal, "measured": measured,
            "pass": None if passed is None else bool(passed), "criterion": criterion}


def targets(results):
    found = []
    encode = results.get("encode")
    if encode:
        identical = all(r["agreement"]["vtrecord"]["frames_identical"] for r in encode)
        found.append(target("same pictures as the x264 CLI", "decoded frames identical in every setting",
                            "identical" if identical else "different", identical,
                            "framemd5 of vtrecord's and the x264 CLI's output, first run of each setting"))
        for peer, name, goal in (("x264", "throughput vs x264 CLI", 1.0), ("ffmpeg", "throughput vs ffmpeg", 1.0)):
            ratios = [r["fps_ratio"][f"vs_{peer}"] for r in encode]
            mean = geometric_mean(ratios)
            worst = min(encode, key=lambda r: r["fps_ratio"][f"vs_{peer}"])
            found.append(target(name, f"≥ {goal:.2f}×", round(mean, 3), mean >= goal,
                                f"geometric mean over all {len(ratios)} settings of vtrecord fps ÷ {peer} fps "
                                f"(each the median of per-run ratios); lowest {min(ratios):.3f}× at "
                                f"{worst['content']} {worst['size']} {worst['speed']} {worst['tune']}"))
    overhead = results.get("overhead")
    if overhead:
        worst = max(r["vtrecord"]["steady_state_outside_libx264_percent"] for r in overhead)
        whole = max(r["vtrecord"]["outside_libx264_percent"] for r in overhead)
        yardstick = max(r["x264_cli"]["outside_libx264_percent"] for r in overhead)
        found.append(target("instructions outside libx264", "< 3 %", round(worst, 2), worst < 3.0,
                            "callgrind, 720p ultrafast, one thread: share of the instructions that the "
                            f"second {overhead[0]['frames']} pictures add, the highest over the clips; "
                            f"over the whole {overhead[0]['frames']}-picture run, start-up included, "
                            f"{whole:.2f} % (the x264 CLI: {yardstick:.2f} %)"))
    conversion = results.get("conversion")
    if conversion:
        ratio = max(r["yuyv_to_i420_vs_memcpy"] for r in conversion)
        found.append(target("YUYV→I420 vs memcpy, 1080p", "≤ 1.5×", round(ratio, 3), ratio <= 1.5,
                            "median ms of FrameConverter.convertYUYV ÷ median ms of memcpy of the same bytes"))
        decode = max(r["mjpeg_decode_ms"] for r in conversion)
        found.append(target("MJPEG 4:2:2 1080p decode → I420", "≤ 4 ms", round(decode, 3), decode <= 4.0,
                            "median ms of FrameConverter.decodeJPEG; the highest over the pictures measured "
                            "(yardsticks on the same JPEGs: libturbojpeg alone "
                            + ", ".join(f"{r['turbojpeg_decode_only_ms']:.2f}" for r in conversion)
                            + " ms, FFmpeg's MJPEG decoder "
                            + ", ".join(f"{r['ffmpeg_mjpeg_decode_ms']:.2f}" for r in conversion) + " ms)"))
    live = results.get("live")
    if live:
        full_hd = [r for r in live if r["size"] == "1080p"]
        drops = sum(r["dropped_queue"] + r["dropped_driver"] for r in full_hd)
        found.append(target("drops at 1080p30 veryfast", "0", drops, drops == 0,
                            "dropped_queue + dropped_driver, YUYV and MJPEG, from the JSON summaries"))
        growth = max((r["rss_end_mib"] - r["rss_start_mib"]) / r["rss_start_mib"] for r in live)
        found.append(target("RSS flat during live recording", f"≤ {RSS_GROWTH_LIMIT:.0%} growth",
                            f"{growth:+.1%}", growth <= RSS_GROWTH_LIMIT,
                            "VmRSS at the end ÷ VmRSS 2 s after the start, the largest growth of the live runs"))
    adaptive = results.get("live_adaptive")
    if adaptive:
        runs = [r for r in adaptive if r["realtime"] == "adaptive"]
        drops = sum(r["dropped_queue"] + r["dropped_driver"] for r in runs)
        found.append(target("adaptive drops at 1080p30 medium/slow", "0", drops, drops == 0,
                            "dropped_queue + dropped_driver of --realtime adaptive from --speed medium and slow, "
                            "YUYV and MJPEG"))
        margins = []
        for r in runs:
            fixed = [f["ssim_y"] for f in adaptive if f["realtime"] == "drop" and f["format"] == r["format"]
                     and f["ssim_y"] is not None]
            if fixed and r["ssim_y"] is not None:
                margins.append(r["ssim_y"] - max(fixed))
            else:
                margins.append(None)
        known = [m for m in margins if m is not None]
        worst = min(known) if len(known) == len(margins) and known else None
        found.append(target("adaptive SSIM vs best fixed without drops", "≥ 0",
                            None if worst is None else round(worst, 5), None if worst is None else worst >= 0,
                            "luma SSIM against the camera's pictures at the same average bit rate: each adaptive "
                            "run minus the best fixed speed of its format that dropped nothing, the lowest"))
    finalizing = results.get("finalize")
    if finalizing:
        beyond = max(r["beyond_moov_bytes"] for r in finalizing)
        found.append(target("MP4 finalizing writes only the index", f"≤ {FINALIZE_EXTRA_BYTES} bytes beyond the moov",
                            beyond, beyond <= FINALIZE_EXTRA_BYTES,
                            "bytes written from the complete moov's write on (strace), minus the moov's size, "
                            "the most over " + ", ".join(r["length"] for r in finalizing) + " recordings"))
        longest = finalizing[-1]
        found.append(target(f"MP4 finalizing time, {longest['length']}", f"< {FINALIZE_MS_LIMIT} ms",
                            longest["finalize_ms"], longest["finalize_ms"] < FINALIZE_MS_LIMIT,
                            "from the start of the moov's write to the end of the 16-byte header write, "
                            "fdatasync between them included (strace -T); the "
                            + f"{finalizing[0]['length']} recording: {finalizing[0]['finalize_ms']} ms"))
    decoding = results.get("decode")
    if decoding:
        ratios = [r["speed_vs_ffmpeg"] for r in decoding]
        mean = geometric_mean(ratios)
        found.append(target("verify vs ffmpeg -f null", "≥ 1.00×", round(mean, 3), mean >= 1.0,
                            "geometric mean over " + ", ".join(f"{r['size']} {r['container']}" for r in decoding)
                            + " of ffmpeg's wall time ÷ vtrecord verify's (each the median of per-run ratios); "
                            f"lowest {min(ratios):.3f}×"))
    thumbnails = results.get("thumbnail")
    if thumbnails:
        ratios = [r["keyframe_speed_vs_ffmpeg"] for r in thumbnails]
        mean = geometric_mean(ratios)
        found.append(target("thumbnail vs ffmpeg -ss T -frames:v 1", "≥ 1.00×", round(mean, 3), mean >= 1.0,
                            f"keyframe mode, {thumbnails[0]['length']} recordings as "
                            + ", ".join(r["container"] for r in thumbnails)
                            + ": geometric mean of ffmpeg's wall time ÷ vtrecord thumbnail's (each the median of "
                            "per-run ratios); --exact (the same picture as ffmpeg): "
                            + ", ".join(f"{r['exact_speed_vs_ffmpeg']:.2f}×" for r in thumbnails)))
        share = max(r["programs"]["keyframe"]["bytes_read"] / r["file_bytes"] for r in thumbnails)
        found.append(target("thumbnail reads little of a long file", "< 5 % of the file", f"{share * 100:.2f} %",
                            share < 0.05, "bytes read from the recording (strace -y) ÷ its size, keyframe mode, "
                            "the most over the containers; ffmpeg: "
                            + ", ".join(f"{r['programs']['ffmpeg']['bytes_read'] / r['file_bytes'] * 100:.2f} %"
                                        for r in thumbnails)))
    sound = results.get("sound")
    if sound:
        r = sound[0]
        found.append(target("sound costs little", "< 3 % of a core", f"{r['sound_cpu_percent']:.2f} %",
                            r["sound_cpu_percent"] < 3.0,
                            f"the audio thread's CPU (48 kHz stereo AAC from the fake microphone) ÷ wall time, "
                            f"median of {r['runs']} {r['size']}{r['fps']} recording(s): {r['audio_thread_cpu_percent']:.2f} %, "
                            f"less the fake microphone's own {r['fake_microphone_cpu_percent']:.2f} % (arecord); "
                            f"the whole process: "
                            f"{r['cpu_percent_without']:.1f} % of a core without sound, {r['cpu_percent_with']:.1f} % "
                            f"with ({r['cpu_percent_difference']:+.1f} %)"))
    publishing = results.get("publish")
    if publishing:
        programs = publishing["programs"]
        vt, ff = programs["vtrecord"]["per_output_percent"], programs["ffmpeg"]["per_output_percent"]
        ratio = publishing["ratio_vs_ffmpeg"]
        found.append(target("CPU per extra output vs ffmpeg -f tee", "≤ 1.00×",
                            None if ratio is None else round(ratio, 3), None if ratio is None else ratio <= 1.0,
                            f"(CPU with the recording and {publishing['outputs']} network outputs − CPU with the "
                            f"recording alone) ÷ {publishing['outputs']}, 1080p{publishing['fps']} "
                            f"{publishing['format']} {publishing['speed']} {publishing['rate_control']} "
                            f"{publishing['bitrate']}, median of {publishing['runs']} interleaved pair(s): vtrecord "
                            f"{vt['median']:.2f} % of a core ({vt['min']:.2f}–{vt['max']:.2f}), ffmpeg "
                            f"{ff['median']:.2f} % ({ff['min']:.2f}–{ff['max']:.2f}); vtrecord's output and libsrt "
                            f"threads alone {programs['vtrecord']['output_threads_percent_per_output']['median']:.2f} %"
                            + ("" if ratio is not None else "; ffmpeg's figure is at or below 0, inside the noise")))
        received = [got for program in programs.values() for run in program["received"] for got in run.values()]
        whole = sum(1 for got in received if got["whole"])
        found.append(target("every receiver gets every picture", "all streams whole", f"{whole} of {len(received)}",
                            whole == len(received),
                            "each receiver's file (SRT, UDP, RTMP; vtrecord and ffmpeg, every run) decoded with "
                            "ffprobe -count_frames: as many pictures as the recording holds, no decoder complaint"))
    delay = results.get("publish_delay")
    if delay:
        srt, allowance = delay["srt"], delay["allowance_ms"]
        p50, p99 = delay["encoder_latency_ms_p50"], delay["encoder_latency_ms_p99"]
        found.append(target("publishing delay, SRT latency=0", f"≤ encoder + {allowance} ms",
                            f"p50 {srt['p50_ms']:.1f} / p99 {srt['p99_ms']:.1f} ms",
                            srt["p50_ms"] <= p50 + allowance and srt["p99_ms"] <= p99 + allowance,
                            f"capture (the fake camera's CLOCK_MONOTONIC stamps) → last TS packet at a loopback SRT "
                            f"receiver, {srt['pictures']} pictures of {delay['runs']} run(s), --tune zerolatency; "
                            f"the encoder (capture → written to the recording, vtrecord's summary): p50 {p50:.1f} / "
                            f"p99 {p99:.1f} ms; UDP straight to a receiver: p50 "
                            f"{delay['udp_direct']['p50_ms']:.1f} / p99 {delay['udp_direct']['p99_ms']:.1f} ms"))
    events = results.get("events")
    if events:
        held = events["memory"]
        mib = 1024 * 1024
        found.append(target("pre-roll memory", "≤ 1.1 × held + 5 MiB",
                            f"{held['rss_cost_bytes'] / mib:.1f} MiB for {held['held_bytes_peak'] / mib:.1f} MiB held",
                            held["rss_cost_bytes"] <= held["goal_bytes"],
                            f"peak RSS with --events and a {held['pre_roll_seconds']} s pre-roll − without, 720p30 "
                            f"CBR {held['bitrate']} with AAC sound (median of {held['runs']} interleaved pair(s): "
                            + ", ".join(f"{c / mib:.1f}" for c in held["rss_cost_runs"])
                            + f" MiB), against held_bytes_peak"))
        trig = events["trigger"]
        found.append(target("trigger → pre-roll on disk", "≤ 200 ms",
                            f"{trig['pre_roll_on_disk_ms']:.0f} ms (max {trig['pre_roll_on_disk_ms_max']:.0f})",
                            trig["pre_roll_on_disk_ms_max"] <= 200,
                            f"SIGUSR1 → every picture of the {trig['pre_roll_seconds']} s pre-roll in complete MP4 "
                            f"fragments on disk (file read every 2 ms), median of {len(trig['runs'])} run(s); first "
                            f"byte {trig['first_byte_ms']:.0f} ms, first picture ffprobe decodes "
                            f"{trig['playable_ms']:.0f} ms"))
    copied = results.get("copy")
    if copied:
        found.append(target("--encoder copy vs ffmpeg -c copy", "≤ 1.00×", round(copied["ratio_vs_ffmpeg"], 3),
                            copied["ratio_vs_ffmpeg"] <= 1.0,
                            f"1080p30 MJPEG, median share of a core over {copied['runs']} interleaved pair(s): vtrecord "
                            f"{copied['vtrecord_cpu_percent']:.2f} %, ffmpeg {copied['ffmpeg_cpu_percent']:.2f} %, "
                            f"the fake camera alone {copied['fake_camera_cpu_percent']:.2f} % of each"))
        found.append(target("--encoder copy's own share at 1080p30", "< 3 % of a core",
                            f"{copied['vtrecord_own_percent']:.2f} %", copied["vtrecord_own_percent"] < 3.0,
                            "vtrecord's process less the fake camera's own work (v4l2-ctl streaming the same format)"))
    motion = results.get("motion")
    if motion:
        full_hd = next(r for r in motion if r["size"] == "1080p")
        worst = max((r for r in motion if r["ratio_vs_motion"] is not None), key=lambda r: r["ratio_vs_motion"])
        found.append(target("motion detection vs Motion", "≤ 0.25×", round(worst["ratio_vs_motion"], 3),
                            worst["ratio_vs_motion"] <= 0.25,
                            "share of a core of --motion's detector (its own CPU clock) ÷ Motion's (process CPU − "
                            "the fake camera alone), same camera and threshold, the highest of "
                            + ", ".join(f"{r['size']} {r['detector_percent']:.2f} % vs {r['motion_daemon_percent']:.1f} %"
                                        for r in motion)))
        found.append(target("motion detection at 1080p30", "< 2 % of a core", f"{full_hd['detector_percent']:.2f} %",
                            full_hd["detector_percent"] < 2,
                            f"--motion's detector, median of {full_hd['runs']} run(s); the process with − without "
                            f"--motion: {full_hd['process_difference_percent']:+.2f} % (the encoder's noise)"))
    http = results.get("http")
    if http:
        delay = http["delay"]
        for case, name in (("mse_zerolatency", "live view delay, MSE, --tune zerolatency"),
                           ("mse_substream", "live view delay, MSE, the live view's own encode"),
                           ("mjpeg_camera", "live view delay, MJPEG camera"),
                           ("llhls_ffmpeg", "live view delay, LL-HLS through ffmpeg")):
            d = delay[case]
            found.append(target(name, f"≤ {d['goal_ms']:.0f} ms", f"{d['p50_ms']:.0f} ms", d["p50_ms"] <= d["goal_ms"],
                                f"glass to glass (frame due at the fake camera → shown), p50 over {d['reads']} reads; "
                                f"p95 {d['p95_ms']:.0f} ms"
                                + (f"; ustreamer on the same camera: p50 {delay['mjpeg_ustreamer']['p50_ms']:.0f} ms, "
                                   f"p95 {delay['mjpeg_ustreamer']['p95_ms']:.0f} ms" if case == "mjpeg_camera" else "")
                                + (f"; the recording's own veryfast encode: p50 "
                                   f"{delay['mse_recording_veryfast']['p50_ms']:.0f} ms" if case == "mse_substream" else "")))
        h264 = http["h264_viewer_cost"]
        found.append(target("CPU per H.264 viewer, 1080p30 8 Mbit/s", "< 0.5 % of a core",
                            f"{h264['percent_per_viewer']:.3f} %", h264["percent_per_viewer"] < 0.5,
                            f"the HTTP threads' CPU with {h264['viewers']} viewers of /live.mp4 (wrk) − without, "
                            f"÷ viewers, median of {len(h264['runs'])} run(s); whole process: "
                            f"{h264['process_percent_per_viewer']:.3f} %"))
        mjpeg = http["mjpeg_viewer_cost"]
        found.append(target("CPU per MJPEG viewer vs ustreamer", "measured",
                            f"{mjpeg['ratio']:.2f}×" if mjpeg["ratio"] is not None else "n/a", True,
                            f"720p30 MJPEG camera, {mjpeg['viewers']} curl viewers: vtrecord "
                            f"{mjpeg['vtrecord_process_percent_per_viewer']:.3f} % of a core per viewer (its HTTP "
                            f"threads {mjpeg['vtrecord_percent_per_viewer']:.3f} %), ustreamer "
                            f"{mjpeg['ustreamer_percent_per_viewer']:.3f} %"))
    return found


def print_tables(results):
    encode = results.get("encode") or []
    if encode:
        print("File input, identical x264 settings (fps: median of "
              f"{encode[0]['runs']} run(s), {encode[0]['frames']} frames; ratio: vtrecord ÷ peer)")
        head = (f"{'content':<12}{'size':<6}{'speed':<10}{'tune':<12}{'thr':>3} "
                f"{'vtrecord':>9}{'x264':>9}{'ffmpeg':>9}{'gst':>9} {'÷x264':>6}{'÷ffm':>6}{'÷gst':>6} "
                f"{'cpu s vt/x264':>14} {'RSS MiB vt/x/ff/gst':>20}  = x264 CLI vt/ff/gst")
        print(head)
        print("-" * len(head))
        for r in encode:
            p = r["programs"]
            agreement = r["agreement"]
            same = "/".join("yes" if agreement[k]["frames_identical"] else "no"
                            for k in ("vtrecord", "ffmpeg", "gstreamer"))
            rss = "/".join(f"{p[k]['peak_rss_mib']:.0f}" for k in ("vtrecord", "x264", "ffmpeg", "gstreamer"))
            print(f"{r['content']:<12}{r['size']:<6}{r['speed']:<10}{r['tune']:<12}{r['threads']:>3} "
                  + "".join(f"{p[k]['fps']:>9.1f}" for k in ("vtrecord", "x264", "ffmpeg", "gstreamer"))
                  + " " + "".join(f"{r['fps_ratio'][k]:>6.2f}" for k in ("vs_x264", "vs_ffmpeg", "vs_gstreamer"))
                  + f" {p['vtrecord']['cpu_seconds']:>6.2f}/{p['x264']['cpu_seconds']:<7.2f} {rss:>20}  {same}")
        print()
    cost = results.get("content_cost")
    if cost and cost["rows"]:
        print("Camera-like vs synthetic input: x264 CLI CPU seconds")
        for row in cost["rows"]:
            print(f"  {row['size']:<6}{row['speed']:<10}{row['tune']:<12}{row['synthetic_cpu_seconds']:>7.2f} → "
                  f"{row['camera_like_cpu_seconds']:>7.2f} s  {row['ratio']:.2f}×")
        verdict = "within" if cost["in_range"] else "OUTSIDE"
        print(f"  geometric mean {cost['geometric_mean']:.2f}× ({verdict} the 2–3× of camera content)")
        print()
    for r in results.get("overhead") or []:
        print(f"Outside libx264 ({r['content']}, {r['size']} {r['speed']}, {r['frames']} frames, one thread): "
              f"vtrecord {r['vtrecord']['outside_libx264_percent']:.2f} % "
              f"(per picture once started {r['vtrecord']['steady_state_outside_libx264_percent']:.2f} %), "
              f"x264 CLI {r['x264_cli']['outside_libx264_percent']:.2f} % "
              f"({r['x264_cli']['steady_state_outside_libx264_percent']:.2f} %)")
    if results.get("overhead"):
        steady = max(r["vtrecord"]["steady_state_outside_libx264_percent"] for r in results["overhead"])
        whole = max(r["vtrecord"]["outside_libx264_percent"] for r in results["overhead"])
        print(f"outside libx264: {steady:.2f} % per picture ({whole:.2f} % of a whole "
              f"{results['overhead'][0]['frames']}-picture run, process start-up included)")
        print()
    for r in results.get("conversion") or []:
        print(f"Conversion, {r['content']} {r['size']}: memcpy {r['memcpy_ms']:.3f} ms, "
              f"YUYV→I420 {r['yuyv_to_i420_ms']:.3f} ms ({r['yuyv_to_i420_vs_memcpy']:.2f}× memcpy), "
              f"MJPEG 4:2:2 ({r['jpeg_bytes'] // 1024} KiB) → I420 {r['mjpeg_decode_ms']:.2f} ms "
              f"(libturbojpeg alone {r['turbojpeg_decode_only_ms']:.2f} ms, "
              f"FFmpeg's decoder {r['ffmpeg_mjpeg_decode_ms']:.2f} ms)")
    if results.get("conversion"):
        print()
    live = results.get("live") or []
    if live:
        print(f"Live from the fake camera ({live[0]['seconds']} s each, --speed {live[0]['speed']})")
        head = (f"{'case':<14}{'captured':>9}{'encoded':>8}{'drop q':>7}{'drop drv':>9}{'p50 ms':>8}{'p99 ms':>8}"
                f"{'CPU %':>7}{'camera %':>9}{'RSS start':>10}{'RSS end':>9}")
        print(head)
        print("-" * len(head))
        for r in live:
            print(f"{r['size'] + str(r['fps']) + ' ' + r['format']:<14}{r['frames_captured']:>9}"
                  f"{r['frames_encoded']:>8}{r['dropped_queue']:>7}{r['dropped_driver']:>9}"
                  f"{r['latency_ms_p50'] or 0:>8.1f}{r['latency_ms_p99'] or 0:>8.1f}{r['cpu_percent']:>7.0f}"
                  f"{r['fake_camera_cpu_percent']:>9.0f}{r['rss_start_mib']:>9.1f}M{r['rss_end_mib']:>8.1f}M")
        print()
    adaptive = results.get("live_adaptive") or []
    if adaptive:
        print(f"--realtime adaptive against fixed speeds, 1080p{adaptive[0]['fps']} from the fake camera, "
              f"{adaptive[0]['seconds']} s each, --bitrate {adaptive[0]['bitrate_asked']}")
        head = (f"{'case':<26}{'encoded':>8}{'dropped':>8}{'Mbit/s':>7}{'SSIM Y':>8}{'PSNR Y':>7}{'CPU %':>6}"
                f"  speeds (s)")
        print(head)
        print("-" * len(head))
        for r in adaptive:
            case = f"{r['format']} {r['realtime']} {r['speed']}"
            spent = ", ".join(f"{k} {v:.1f}" for k, v in sorted(r["speed_seconds"].items(), key=lambda kv: -kv[1]))
            ssim = f"{r['ssim_y']:>8.4f}" if r["ssim_y"] is not None else f"{'—':>8}"
            psnr = f"{r['psnr_y']:>7.2f}" if r["psnr_y"] is not None else f"{'—':>7}"
            print(f"{case:<26}{r['frames_encoded']:>8}{r['dropped_queue'] + r['dropped_driver']:>8}"
                  f"{r['bitrate'] / 1e6:>7.2f}{ssim}{psnr}{r['cpu_percent']:>6.0f}  {spent}")
        print()
    finalizing = results.get("finalize") or []
    if finalizing:
        print("MP4 finalization (strace: from the complete moov's write to the 16-byte header)")
        print(f"{'recording':<12}{'file bytes':>14}{'moov bytes':>12}{'written':>10}{'beyond':>8}{'ms':>9}")
        for r in finalizing:
            print(f"{r['length']:<12}{r['file_bytes']:>14}{r['moov_bytes']:>12}{r['finalize_bytes']:>10}"
                  f"{r['beyond_moov_bytes']:>8}{r['finalize_ms']:>9.2f}")
        print()
    decoding = results.get("decode") or []
    if decoding:
        print(f"Decoding every frame: vtrecord verify vs ffmpeg -f null (fps: median of {decoding[0]['runs']} run(s))")
        print(f"{'file':<28}{'frames':>7}{'verify':>9}{'ffmpeg':>9}{'ratio':>7}{'cpu s vt/ff':>14}")
        for r in decoding:
            p = r["programs"]
            print(f"{r['content'] + ' ' + r['size'] + ' ' + r['container']:<28}{r['frames']:>7}"
                  f"{p['vtrecord']['fps']:>9.1f}{p['ffmpeg']['fps']:>9.1f}{r['speed_vs_ffmpeg']:>7.2f}"
                  f"{p['vtrecord']['cpu_seconds']:>7.2f}/{p['ffmpeg']['cpu_seconds']:<6.2f}")
        print()
    thumbnails = results.get("thumbnail") or []
    if thumbnails:
        print(f"A thumbnail from the middle of {thumbnails[0]['length']}: vtrecord thumbnail vs "
              f"ffmpeg -ss T -frames:v 1 (ms: median of {thumbnails[0]['runs']} run(s))")
        print(f"{'file':<8}{'MB':>8}{'keyframe':>10}{'exact':>8}{'ffmpeg':>8}{'ratio':>7}{'exact':>7}"
              f"{'KiB read vt/ff':>18}")
        for r in thumbnails:
            p = r["programs"]
            print(f"{r['container']:<8}{r['file_bytes'] / 1e6:>8.1f}{p['keyframe']['wall_ms']:>10.0f}"
                  f"{p['exact']['wall_ms']:>8.0f}{p['ffmpeg']['wall_ms']:>8.0f}{r['keyframe_speed_vs_ffmpeg']:>7.2f}"
                  f"{r['exact_speed_vs_ffmpeg']:>7.2f}"
                  f"{p['keyframe']['bytes_read'] // 1024:>10}/{p['ffmpeg']['bytes_read'] // 1024:<7}")
        print()
    for r in results.get("sound") or []:
        print(f"Sound: {r['size']}{r['fps']} {r['format']} {r['speed']}, {r['seconds']} s, {r['runs']} run(s): "
              f"{r['cpu_percent_without']:.1f} % of a core without, {r['cpu_percent_with']:.1f} % with "
              f"({r['cpu_percent_difference']:+.1f} %); the audio thread {r['audio_thread_cpu_percent']:.2f} %, "
              f"of which the fake microphone {r['fake_microphone_cpu_percent']:.2f} %; "
              f"frames dropped: {r['dropped_frames_without']} without, {r['dropped_frames_with']} with")
        print()
    publishing = results.get("publish")
    if publishing:
        print(f"Publishing beside the recording: 1080p{publishing['fps']} {publishing['format']} {publishing['speed']} "
              f"{publishing['rate_control']} {publishing['bitrate']} from the fake camera, {publishing['seconds']} s, "
              f"{publishing['runs']} run(s); {publishing['outputs']} outputs (SRT, UDP, RTMP); % of one core")
        head = f"{'program':<10}{'alone':>8}{'with':>8}{'per output':>12}{'range':>16}{'output threads':>16}"
        print(head)
        print("-" * len(head))
        for name, program in publishing["programs"].items():
            cost = program["per_output_percent"]
            threads = program.get("output_threads_percent_per_output")
            print(f"{name:<10}{program['cpu_percent_alone']:>8.1f}{program['cpu_percent_with_outputs']:>8.1f}"
                  f"{cost['median']:>12.2f}{cost['min']:>8.2f}–{cost['max']:<7.2f}"
                  f"{'' if threads is None else format(threads['median'], '>16.2f')}")
        ratio = publishing["ratio_vs_ffmpeg"]
        print(f"vtrecord ÷ ffmpeg per output: {'—' if ratio is None else format(ratio, '.2f')}")
        print()
    delay = results.get("publish_delay")
    if delay:
        print(f"Delay, capture → arrival, --tune zerolatency, SRT latency={delay['srt_latency_ms']} "
              f"({delay['runs']} run(s) of {delay['seconds']} s): SRT p50 {delay['srt']['p50_ms']:.1f} / p99 "
              f"{delay['srt']['p99_ms']:.1f} ms, UDP direct p50 {delay['udp_direct']['p50_ms']:.1f} / p99 "
              f"{delay['udp_direct']['p99_ms']:.1f} ms; encoder (capture → written) p50 "
              f"{delay['encoder_latency_ms_p50']:.1f} / p99 {delay['encoder_latency_ms_p99']:.1f} ms")
        print()
    events = results.get("events")
    if events:
        held, trig = events["memory"], events["trigger"]
        print(f"Event clips, 720p30 {held['bitrate']} with sound, {held['pre_roll_seconds']} s pre-roll: held "
              f"{held['held_bytes_peak'] / 2**20:.1f} MiB, resident memory +{held['rss_cost_bytes'] / 2**20:.1f} MiB; "
              f"SIGUSR1 → first byte {trig['first_byte_ms']:.0f} ms, pre-roll on disk "
              f"{trig['pre_roll_on_disk_ms']:.0f} ms, playable {trig['playable_ms']:.0f} ms")
        print()
    motion = results.get("motion")
    if motion:
        print("Motion detection, share of a core: " + "; ".join(
            f"{r['size']}{r['fps']} vtrecord {r['detector_percent']:.2f} %, Motion {r['motion_daemon_percent']:.1f} % "
            f"(ratio {r['ratio_vs_motion']:.3f})" for r in motion))
        print()
    copied = results.get("copy")
    if copied:
        print(f"Storing a 1080p30 MJPEG camera as it sends it, share of a core: vtrecord --encoder copy "
              f"{copied['vtrecord_cpu_percent']:.2f} % ({copied['vtrecord_own_percent']:.2f} % its own), ffmpeg -c copy "
              f"{copied['ffmpeg_cpu_percent']:.2f} % ({copied['ffmpeg_own_percent']:.2f} %), the fake camera "
              f"{copied['fake_camera_cpu_percent']:.2f} %")
        print()
    print("Targets")
    for t in results["targets"]:
        verdict = {True: "pass", False: "FAIL", None: "n/a"}[t["pass"]]
        print(f"  {verdict:<5}{t['name']:<38}{t['target']:>14}  measured {t['measured']}")


def chart(results, path):
    """fps per program per setting (one panel per content and size) and vtrecord's ratios."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    encode = results.get("encode") or []
    if not encode:
        return False
    panels = sorted({(r["content"], r["size"]) for r in encode}, key=lambda k: (k[0] != "synthetic", k[1] != "720p"))
    programs = ("vtrecord", "x264", "ffmpeg", "gstreamer")
    columns = 2
    rows = (len(panels) + columns - 1) // columns + 1
    figure, axes = plt.subplots(rows, columns, figsize=(14, 4.2 * rows), squeeze=False)
    for index, (content, size) in enumerate(panels):
        axis = axes[index // columns][index % columns]
        settings = [r for r in encode if (r["content"], r["size"]) == (content, size)]
        labels = [f"{r['speed']}\n{'zerolat.' if r['tune'] == 'zerolatency' else ''}" for r in settings]
        width = 0.2
        for offset, program in enumerate(programs):
            axis.bar([i + (offset - 1.5) * width for i in range(len(settings))],
                     [r["programs"][program]["fps"] for r in settings], width, label=program)
        axis.set_xticks(range(len(settings)), labels)
        axis.set_ylabel("fps")
        axis.set_title(f"{content} {size}")
        axis.legend(fontsize=8)
    for column, peer in enumerate(("x264", "ffmpeg")):
        axis = axes[rows - 1][column]
        for content, size in panels:
            settings = [r for r in encode if (r["content"], r["size"]) == (content, size)]
            axis.plot(range(len(settings)), [r["fps_ratio"][f"vs_{peer}"] for r in settings], marker="o",
                      label=f"{content} {size}")
            axis.set_xticks(range(len(settings)),
                            [f"{r['speed']}\n{'zerolat.' if r['tune'] == 'zerolatency' else ''}" for r in settings])
        axis.axhline(1.0, color="grey", linewidth=1)
        axis.set_title(f"vtrecord fps ÷ {peer} fps (same runs)")
        axis.legend(fontsize=8)
    for index in range(len(panels), (rows - 1) * columns):
        axes[index // columns][index % columns].axis("off")
    machine = results["machine"]
    figure.suptitle(f"vtrecord make bench — {machine['cpu_model']}, {machine['nproc']} cores, "
                    f"{encode[0]['frames']} frames, median of {encode[0]['runs']} run(s)"
                    + (" — QUICK smoke run" if results["knobs"]["quick"] else ""))
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return True
