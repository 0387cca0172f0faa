import Foundation
import Testing
import VTTestSupport

/// The fake microphone (Tests/FakeALSA) proved against clients written by other people: arecord
/// and ffmpeg's alsa input, through libasound as on a machine with a sound card. Recordings are
/// compared sample by sample with what the microphone heard, computed here from the times in its
/// report, so every position, beep and lost sample is checked, not only exit statuses.
@Suite("Fake ALSA microphone against arecord and ffmpeg")
struct FakeMicrophoneProofTests {
    @Test func arecordListsEveryMicrophoneWithItsDescription() throws {
        let alsa = try FakeALSAConfiguration([
            FakeMicrophone(name: "fastmic", description: "Fast test microphone", ppm: 50_000),
            FakeMicrophone(name: "slowmic", description: "Slow test microphone", ppm: -50_000),
        ])
        let result = try ChildProcess.run(["arecord", "-L"], environment: alsa.environment())
        try #require(result.status == 0, "\(result.transcript)")
        #expect(result.standardOutputText == "fastmic\n    Fast test microphone\nslowmic\n    Slow test microphone\n")
    }

    /// Beeps come on whole seconds of true time, so their onsets are rate × (1 + ppm) samples
    /// apart, each at the sample the start time in the report predicts.
    @Test(arguments: [0.0, 50_000, -50_000])
    func arecordHearsTheBeepsOnWholeSecondsOfTrueTime(ppm: Double) throws {
        let microphone = FakeMicrophone(ppm: ppm)
        let alsa = try FakeALSAConfiguration([microphone])
        let (wave, report) = try alsa.arecord(["-f", "S16_LE", "-r", "48000", "-c", "2", "-d", "3"])
        #expect(wave.rate == 48000 && wave.channels == 2 && wave.samples.count == 3 * 48000)
        #expect(wave.channelsAgree)
        let run = try #require(report.runs.first)
        #expect(report.runs.count == 1 && report.xruns == 0, "\(report)")
        let heard = Heard(microphone: microphone, rate: 48000, epoch: report.epoch)
        let onsets = Heard.onsets(in: wave.samples, rate: 48000)
        #expect(onsets == heard.predictedOnsets(runStart: run.start, frames: wave.samples.count))
        #expect(onsets.count >= 2)
        let spacing = Int(microphone.framesPerSecond(rate: 48000))
        #expect(zip(onsets, onsets.dropFirst()).allSatisfy { $1 - $0 == spacing }, "\(onsets)")
        #expect(heard.deviation(of: wave.samples, runs: report.runs) <= 1.0 / 32768)
        // From a fifth to half a second after a beep's onset only the tone sounds.
        let quiet = onsets.first.map { wave.samples[$0 + 9600..<$0 + 24000].map(abs).max() ?? 0 } ?? 0
        #expect(abs(quiet - 0.1) < 0.001, "the tone's peak is -20 dBFS, found \(quiet)")
    }

    /// ffmpeg stamps what it reads with the wall clock and stops after two seconds of it: a
    /// fast clock gives it more frames in that time, a slow one fewer.
    @Test(arguments: [0.0, 50_000, -50_000])
    func ffmpegGetsFramesInProportionToTheClock(ppm: Double) throws {
        let microphone = FakeMicrophone(ppm: ppm)
        let alsa = try FakeALSAConfiguration([microphone])
        let output = alsa.file("ffmpeg.wav")
        let result = try ChildProcess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error",
                                           "-f", "alsa", "-sample_rate", "48000", "-channels", "2", "-t", "2",
                                           "-i", microphone.name, "-c:a", "pcm_s16le", "-y", output],
                                          environment: alsa.environment(), timeout: .seconds(30))
        try #require(result.status == 0, "\(result.transcript)")
        let frames = try Wave(path: output).samples.count
        let expected = 2 * microphone.framesPerSecond(rate: 48000)
        #expect(abs(Double(frames) - expected) < expected * 0.01, "\(frames) frames, expected \(expected)")
    }

    @Test(arguments: FakeMicrophone.SampleFormat.allCases)
    func everyFormatCarriesTheSameSoundAtItsOwnScale(format: FakeMicrophone.SampleFormat) throws {
        let microphone = FakeMicrophone()
        let alsa = try FakeALSAConfiguration([microphone])
        let (wave, report) = try alsa.arecord(["-f", format.rawValue, "-r", "44100", "-c", "1", "-d", "1"])
        #expect(wave.samples.count == 44100 && report.format == format.rawValue && report.rate == 44100)
        let tolerance = switch format {
        case .s16: 1.0 / 32768
        case .s32: 1.0 / 2_147_483_648
        case .float: 1e-7
        }
        let heard = Heard(microphone: microphone, rate: 44100, epoch: report.epoch)
        #expect(heard.deviation(of: wave.samples, runs: report.runs) <= tolerance)
    }

    @Test func arecordIsRefusedWhatTheMicrophoneDoesNotOffer() throws {
        let alsa = try FakeALSAConfiguration([FakeMicrophone(rates: [48000], channels: [2], formats: [.s32])])
        let mono = try alsa.arecordResult(["-f", "S32_LE", "-r", "48000", "-c", "1", "-d", "1"])
        #expect(mono.status == 1 && mono.standardError.contains("Channels count non available"), "\(mono.transcript)")
        let s16 = try alsa.arecordResult(["-f", "S16_LE", "-r", "48000", "-c", "2", "-d", "1"])
        #expect(s16.status == 1 && s16.standardError.contains("Sample format non available\nAvailable formats:\n- S32_LE\n"),
                "\(s16.transcript)")
        // arecord takes the nearest rate with a warning, and says so in the file.
        let (wave, _) = try alsa.arecord(["-f", "S32_LE", "-r", "44100", "-c", "2", "-d", "1"], quiet: false,
                                         expecting: "Warning: rate is not accurate (requested = 44100Hz, got = 48000Hz)")
        // It counts the frames of -d at the rate it asked for.
        #expect(wave.rate == 48000 && wave.samples.count == 44100)
    }

    @Test(arguments: ["plug:vtmic", "default"])
    func plugConvertsWhatTheMicrophoneDoesNotOffer(device: String) throws {
        let alsa = try FakeALSAConfiguration([FakeMicrophone(rates: [48000], channels: [2], formats: [.s32])])
        let (wave, report) = try alsa.arecord(["-f", "S16_LE", "-r", "22050", "-c", "1", "-d", "2"], device: device)
        #expect(wave.rate == 22050 && wave.channels == 1 && wave.bits == 16 && wave.samples.count == 2 * 22050)
        #expect(report.rate == 48000 && report.format == "S32_LE" && report.channels == 2)
        let onsets = Heard.onsets(in: wave.samples, rate: 22050)
        // The linear converter may move each onset by a sample.
        #expect(!onsets.isEmpty && zip(onsets, onsets.dropFirst()).allSatisfy { abs($1 - $0 - 22050) <= 2 }, "\(onsets)")
    }

    @Test func theSystemConfigurationAddsItsDevicesAndItsPlug() throws {
        let alsa = try FakeALSAConfiguration([FakeMicrophone()], includingSystemConfiguration: true)
        let list = try ChildProcess.run(["arecord", "-L"], environment: alsa.environment())
        #expect(list.standardOutputText.contains("null\n") && list.standardOutputText.contains("vtmic\n    vtrecord test microphone\n"),
                "\(list.transcript)")
        let (wave, _) = try alsa.arecord(["-f", "S16_LE", "-r", "16000", "-c", "1", "-d", "1"], device: "plug:vtmic")
        #expect(wave.rate == 16000 && wave.samples.count == 16000)
    }

    @Test func forcedOverrunsReachArecordWhichRecovers() throws {
        let microphone = FakeMicrophone(overrunsAt: [.milliseconds(700), .milliseconds(1400)])
        let alsa = try FakeALSAConfiguration([microphone])
        let result = try alsa.arecordResult(["-f", "S16_LE", "-r", "48000", "-c", "2", "-d", "2"], quiet: false)
        try #require(result.status == 0, "\(result.transcript)")
        #expect(result.standardError.split(separator: "\n").filter { $0.hasPrefix("overrun!!! (at least ") }.count == 2,
                "\(result.transcript)")
        let wave = try Wave(path: alsa.file("arecord.wav"))
        let report = try alsa.report(of: microphone.name)
        #expect(wave.samples.count == 96000)
        #expect(report.xruns == 2 && report.forcedXruns == 2, "\(report)")
        #expect(report.runs.map(\.end) == ["overrun", "overrun", "stop"], "\(report)")
        // The first run started the epoch: it overran at exactly 0.7 s of frames.
        #expect(report.runs.first?.captured == 33600)
        let heard = Heard(microphone: microphone, rate: 48000, epoch: report.epoch)
        #expect(heard.deviation(of: wave.samples, runs: report.runs) <= 1.0 / 32768)
    }

    /// arecord's half-second buffer cannot take a 0.8 s jump: the device overruns when the stall
    /// ends, and the recording misses at least the stall's span of true time.
    @Test func aStallLongerThanTheBufferOverrunsWhenThePositionJumps() throws {
        let microphone = FakeMicrophone(stall: .init(at: .milliseconds(600), length: .milliseconds(800)))
        let alsa = try FakeALSAConfiguration([microphone])
        let (wave, report) = try alsa.arecord(["-f", "S16_LE", "-r", "48000", "-c", "2", "-d", "2"], quiet: false,
                                              buffered: false, expecting: "overrun!!!")
        #expect(report.stalls == 1 && report.stallFrames == 38400 && report.xruns == 1 && report.forcedXruns == 0,
                "\(report)")
        #expect(report.runs.map(\.end) == ["xrun", "stop"], "\(report)")
        let heard = Heard(microphone: microphone, rate: 48000, epoch: report.epoch)
        #expect(heard.deviation(of: wave.samples, runs: report.runs) <= 1.0 / 32768)
        let last = try #require(report.runs.last)
        let span = Double(last.start - report.runs[0].start) / 1e9 + Double(last.delivered) / 48000
        #expect(span - Double(wave.samples.count) / 48000 >= 0.8, "the recording spans \(span) s of true time")
    }

    /// A stall the buffer can take: no overrun, the stall's samples read as silence where they
    /// were lost (jump), or are missing and the later beeps come early by as many samples (gap).
    /// The epoch is a whole second, well after arecord starts, so the stall falls between the
    /// beep on the epoch and the next one, and both are found.
    @Test(arguments: [FakeMicrophone.Stall.Mode.jump, .gap])
    func aShortStallLosesItsSamplesAndTheRestKeepTheirTrueTime(mode: FakeMicrophone.Stall.Mode) throws {
        _ = try FakeALSALibrary.path()   // built before the clock starts: that can take a second
        let epoch = (FakeMicrophone.monotonicNanoseconds() + 1_800_000_000) / 1_000_000_000 * 1_000_000_000
        let microphone = FakeMicrophone(stall: .init(at: .milliseconds(600), length: .milliseconds(200), mode: mode),
                                        epoch: .monotonic(nanoseconds: epoch))
        let alsa = try FakeALSAConfiguration([microphone])
        let (wave, report) = try alsa.arecord(["-f", "S16_LE", "-r", "48000", "-c", "2", "-d", "3"])
        #expect(report.stalls == 1 && report.stallFrames == 9600 && report.xruns == 0 && report.runs.count == 1,
                "\(report)")
        let heard = Heard(microphone: microphone, rate: 48000, epoch: epoch)
        #expect(heard.deviation(of: wave.samples, runs: report.runs) <= 1.0 / 32768)
        let start = try #require(report.runs.first).start
        try #require(epoch - start >= 250_000_000, "arecord started too late: \(Double(epoch - start) / 1e9) s before the epoch")
        let stalled = Int((Int128(epoch + 600_000_000 - start) * 48000 + 999_999_999) / 1_000_000_000)
        #expect(wave.samples[stalled..<stalled + 9600].allSatisfy { $0 == 0 } == (mode == .jump))
        let onsets = Heard.onsets(in: wave.samples, rate: 48000)
        let onEpoch = Int((Int128(epoch - start) * 48000 + 999_999_999) / 1_000_000_000)
        let across = try #require(onsets.firstIndex(of: onEpoch), "no beep at sample \(onEpoch): \(onsets)")
        let spacings = zip(onsets, onsets.dropFirst()).map { $1 - $0 }
        #expect(spacings.count > across && spacings[across] == (mode == .jump ? 48000 : 48000 - 9600), "\(onsets)")
        #expect(spacings.enumerated().allSatisfy { $0.offset == across || $0.element == 48000 }, "\(onsets)")
    }

    /// One schedule for several processes (an epoch in the configuration): the first records
    /// until the unplug, the second is refused, the third opens after the replug.
    @Test func unpluggingEndsArecordAndRefusesOpensUntilTheReplug() throws {
        _ = try FakeALSALibrary.path()   // built before the clock starts: that can take a second
        let epoch = FakeMicrophone.monotonicNanoseconds()
        let microphone = FakeMicrophone(unplugAt: .milliseconds(1000), replugAt: .milliseconds(2500),
                                        epoch: .monotonic(nanoseconds: epoch))
        let alsa = try FakeALSAConfiguration([microphone])
        let first = try alsa.arecordResult(["-f", "S16_LE", "-r", "48000", "-c", "2", "-d", "5"])
        let ended = Double(FakeMicrophone.monotonicNanoseconds() - epoch) / 1e9
        #expect(first.status == 1 && first.standardError.contains("read error: No such device"), "\(first.transcript)")
        #expect(ended >= 1.0 && ended < 2.0, "arecord ended \(ended) s after the epoch")
        let second = try alsa.arecordResult(["-f", "S16_LE", "-r", "48000", "-c", "2", "-d", "1"])
        try #require(FakeMicrophone.monotonicNanoseconds() < epoch + 2_500_000_000, "too slow to open before the replug")
        #expect(second.status == 1 && second.standardError.contains("audio open error: No such device"),
                "\(second.transcript)")
        let wait = epoch + 2_550_000_000 - FakeMicrophone.monotonicNanoseconds()
        if wait > 0 { Thread.sleep(forTimeInterval: Double(wait) / 1e9) }
        let third = try alsa.arecordResult(["-f", "S16_LE", "-r", "48000", "-c", "2", "-s", "12000"])
        #expect(third.status == 0, "\(third.transcript)")
        let reports = try alsa.reports(of: microphone.name)
        try #require(reports.count == 3, "\(reports)")
        let run = try #require(reports[0].runs.first)
        #expect(reports[0].unplugged && run.end == "unplug", "\(reports[0])")
        #expect(run.captured == Int((epoch + 1_000_000_000 - run.start) * 48000 / 1_000_000_000))
        #expect(reports[1].opens == 0 && reports[1].openRefusals == 1, "\(reports[1])")
        #expect(reports[2].opensAfterReplug == 1 && reports[2].runs.count == 1, "\(reports[2])")
        #expect(try Wave(path: alsa.file("arecord.wav")).samples.count == 12000)
    }

    /// In one process the schedule outlives snd_pcm_close: snd_pcm_recover cannot bring back an
    /// unplugged device, and reopening fails until the replug.
    @Test func aClientReopeningInOneProcessMeetsTheSameSchedule() throws {
        let microphone = FakeMicrophone(unplugAt: .milliseconds(500), replugAt: .milliseconds(1200))
        let alsa = try FakeALSAConfiguration([microphone])
        let result = try ChildProcess.run([try FakeALSALibrary.client("reopen"), microphone.name, "48000", "10"],
                                          environment: alsa.environment(), timeout: .seconds(30))
        try #require(result.status == 0, "\(result.transcript)")
        let lines = Dictionary(result.standardOutputText.split(separator: "\n").map { line in
            let words = line.split(separator: " ")
            return (String(words[0].split(separator: "=")[0]), line)
        }, uniquingKeysWith: { first, _ in first })
        #expect(lines["read_error"]?.hasPrefix("read_error=-19 ") == true, "\(result.transcript)")
        #expect(lines["recover"] == "recover=-19" && lines["prepare"] == "prepare=-19", "\(result.transcript)")
        #expect(lines["refused"]?.hasPrefix("refused=-19 ") == true && lines["read"] == "read=4800", "\(result.transcript)")
        let report = try alsa.report(of: microphone.name)
        #expect(report.opens == 2 && report.unpluggedHandles == 1 && report.openRefusals >= 1
                && report.opensAfterReplug == 1, "\(report)")
        #expect(report.runs.map(\.end) == ["unplug", "stop"] && report.runs[0].captured == 24000, "\(report)")
        let reopened = try #require(report.runs.last).start - report.epoch
        #expect(reopened >= 1_200_000_000 && reopened < 1_700_000_000, "reopened \(reopened) ns after the epoch")
    }
}

extension FakeALSAConfiguration {
    /// Runs arecord on `device` (the first microphone by default) into a WAV file. A second of
    /// buffer unless `buffered` is false (arecord's own half second): a busy machine must not
    /// make overruns the test did not ask for.
    func arecordResult(_ arguments: [String], device: String? = nil, output: String = "arecord.wav",
                       quiet: Bool = true, buffered: Bool = true) throws -> ChildProcess.Result {
        try ChildProcess.run(["arecord"] + (quiet ? ["-q"] : []) + (buffered ? ["--buffer-time=1000000"] : [])
                             + ["-D", device ?? microphones[0].name] + arguments + [file(output)],
                             environment: environment(), timeout: .seconds(30))
    }

    /// Runs arecord, requires it to succeed (with `expecting` on standard error), and returns the
    /// recording and the microphone's report.
    func arecord(_ arguments: [String], device: String? = nil, quiet: Bool = true, buffered: Bool = true,
                 expecting: String? = nil) throws -> (Wave, FakeMicrophone.Report) {
        let result = try arecordResult(arguments, device: device, quiet: quiet, buffered: buffered)
        try #require(result.status == 0, "\(result.transcript)")
        if let expecting { #expect(result.standardError.contains(expecting), "\(result.transcript)") }
        // The processes ran one after the other: the last report is this one's.
        let report = try #require(try reports(of: microphones[0].name).last)
        return (try Wave(path: file("arecord.wav")), report)
    }
}

/// What the microphone heard, computed as Tests/FakeALSA's clock.c and sound.c do, from the run
/// starts in its report: sample n of a run started at t0 was taken at t0 + n / (rate × (1 + ppm))
/// and holds the tone, plus the beep in the first beep length after each whole second.
struct Heard {
    let microphone: FakeMicrophone
    let rate: Int
    let epoch: Int64

    private static let nanosecondsSquared: Int128 = 1_000_000_000_000_000_000

    /// rate × (1e9 + ppb): frames per 1e9 true seconds.
    private var denominator: Int128 {
        Int128(rate) * Int128(1_000_000_000 + Int64((microphone.ppm * 1000).rounded()))
    }

    func sample(_ index: Int, runStart start: Int64) -> Double {
        let scaled = Int128(index) * Self.nanosecondsSquared
        var ns = start + Int64(scaled / denominator)
        let fraction = Double(scaled % denominator) / Double(denominator)
        if let stall = microphone.stall {
            let from = max(epoch + stall.at.nanoseconds, start), to = epoch + stall.at.nanoseconds + stall.length.nanoseconds
            if from < to && ns >= from {
                switch stall.mode {
                case .jump: if ns < to { return 0 }
                case .gap: ns += to - from
                }
            }
        }
        let tone = microphone.toneFrequency
        var value = pow(10, microphone.toneLevel / 20) * sin(2 * .pi * (fmod(tone * Double(ns / 1_000_000_000), 1)
            + tone * (Double(ns % 1_000_000_000) + fraction) / 1e9))
        let beep = microphone.beep
        var intoSecond = (ns - beep.phase.nanoseconds) % 1_000_000_000
        if intoSecond < 0 { intoSecond += 1_000_000_000 }
        if intoSecond < beep.length.nanoseconds {
            value += pow(10, beep.level / 20) * cos(2 * .pi * beep.frequency * (Double(intoSecond) + fraction) / 1e9)
        }
        return min(max(value, -1), 1)
    }

    /// The largest difference between a recording and what the runs delivered; infinity when
    /// the recording is longer, or shorter by more than part of the last run (arecord reads
    /// whole periods and writes only what it was asked for).
    func deviation(of samples: [Double], runs: [FakeMicrophone.Report.Run]) -> Double {
        let delivered = runs.map(\.delivered).reduce(0, +)
        guard samples.count <= delivered, samples.count > delivered - (runs.last?.delivered ?? 0) else { return .infinity }
        var worst = 0.0
        var index = 0
        for run in runs {
            for n in 0..<min(run.delivered, samples.count - index) {
                worst = max(worst, abs(samples[index] - sample(n, runStart: run.start)))
                index += 1
            }
        }
        return worst
    }

    /// The sample of each beep in a run's first `frames` that `onsets(in:rate:)` can find: the
    /// first taken at or after a whole second, with at least a fifth of a second before it.
    func predictedOnsets(runStart start: Int64, frames: Int) -> [Int] {
        let phase = microphone.beep.phase.nanoseconds
        var onsets: [Int] = []
        var second = (start - phase) / 1_000_000_000
        while true {
            let beat = second * 1_000_000_000 + phase
            second += 1
            guard beat >= start else { continue }
            let n = Int((Int128(beat - start) * denominator + Self.nanosecondsSquared - 1) / Self.nanosecondsSquared)
            if n >= frames { return onsets }
            if n >= rate / 5 { onsets.append(n) }
        }
    }

    /// Where beeps start in a recording: samples louder than -9 dBFS (the tone peaks at -20)
    /// with nothing as loud in the fifth of a second before them.
    static func onsets(in samples: [Double], rate: Int) -> [Int] {
        let quiet = rate / 5
        var onsets: [Int] = []
        var lastLoud: Int?
        for (index, value) in samples.enumerated() where abs(value) > 0.35 {
            if index >= quiet && (lastLoud.map { index - $0 >= quiet } ?? true) { onsets.append(index) }
            lastLoud = index
        }
        return onsets
    }
}

/// A WAV file as arecord and ffmpeg write it: its format, and the first channel's samples as
/// fractions of full scale. A file cut short (arecord ending on an error) reads to its end.
struct Wave {
    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    let rate: Int
    let channels: Int
    let bits: Int
    let samples: [Double]
    /// Every channel holds the first one's samples.
    let channelsAgree: Bool

    init(path: String) throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        func u16(_ at: Int) -> UInt32 { UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> UInt32 { u16(at) | u16(at + 2) << 16 }
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8) else {
            throw Malformed(description: "\(path) is not a WAV file")
        }
        var tag: UInt32 = 0, channels = 0, rate = 0, bits = 0
        var offset = 12
        var body: Range<Int>?
        while offset + 8 <= bytes.count, body == nil {
            let size = Int(u32(offset + 4)), start = offset + 8
            if bytes[offset..<offset + 4].elementsEqual("fmt ".utf8), start + 16 <= bytes.count {
                tag = u16(start)
                channels = Int(u16(start + 2))
                rate = Int(u32(start + 4))
                bits = Int(u16(start + 14))
                if tag == 0xFFFE, start + 26 <= bytes.count { tag = u16(start + 24) }
            } else if bytes[offset..<offset + 4].elementsEqual("data".utf8) {
                body = start..<min(start + size, bytes.count)
            }
            offset = start + size + size % 2
        }
        guard let body, channels > 0, [16, 32].contains(bits), tag == 1 || (tag == 3 && bits == 32) else {
            throw Malformed(description: "\(path): no data, or a format other than 16/32-bit PCM or float")
        }
        let width = bits / 8, frames = body.count / (width * channels)
        func value(_ at: Int) -> Double {
            switch (tag, bits) {
            case (1, 16): Double(Int16(bitPattern: UInt16(u16(at)))) / 32768
            case (1, _): Double(Int32(bitPattern: u32(at))) / 2_147_483_648
            default: Double(Float(bitPattern: u32(at)))
            }
        }
        var samples: [Double] = []
        samples.reserveCapacity(frames)
        var agree = true
        for frame in 0..<frames {
            let at = body.lowerBound + frame * width * channels
            let first = value(at)
            samples.append(first)
            for channel in 1..<max(channels, 1) where value(at + channel * width) != first { agree = false }
        }
        self.rate = rate
        self.channels = channels
        self.bits = bits
        self.samples = samples
        channelsAgree = agree
    }
}

private extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
