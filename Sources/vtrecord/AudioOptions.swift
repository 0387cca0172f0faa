import ArgumentParser
import Logging
import VTAudio
import VTCore
import VTOutput

extension AudioCodec: ExpressibleByArgument {}

/// `--audio-offset -40` or `+25.5`: milliseconds, either sign.
struct OffsetArgument: ExpressibleByArgument {
    let milliseconds: Double
    init?(argument: String) {
        let text = argument.hasSuffix("ms") ? String(argument.dropLast(2)) : argument
        guard let value = Double(text), value.isFinite, abs(value) <= 10_000 else { return nil }
        milliseconds = value
    }
}

/// The sound track's options (`--audio` and the rest).
struct AudioOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Record sound from an ALSA device: a PCM name (default, hw:1,0, plughw:CARD=C920,DEV=0), a card's name as 'vtrecord devices' shows it (stable across reboots), or 'test' for a beep in step with the test pattern's flash. Needs .mp4, .mkv or .ts.", valueName: "device"))
    var audio: String?

    @Option(name: .long, help: ArgumentHelp("Sound codec: aac (default for .mp4 and .ts), opus (default for .mkv), pcm (16-bit, .mkv only).", valueName: "codec"))
    var audioCodec: AudioCodec?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Sound bit rate in bit/s: 128k (the default for AAC), 96k (for Opus).", valueName: "rate"))
    var audioBitrate: DecimalQuantity?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Sample rate to capture at, in Hz (default: 48000 where the device offers it, else its own). Opus is always coded at 48000.", valueName: "Hz"))
    var audioRate: Int?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Channels to capture: 1 or 2 (default 2 where the device offers it, else 1).", valueName: "n"))
    var audioChannels: Int?

    // Unconditional: the value may start with a minus sign.
    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("Move the sound later (positive) or earlier (negative) by this many milliseconds, for a device whose delay is known.", valueName: "ms"))
    var audioOffset: OffsetArgument?

    @Flag(name: .long, inversion: .prefixedNo, help: "End the recording (exit 3) when the sound device fails or goes away, instead of going on with silence (--no-audio-required undoes a preset's).")
    var audioRequired = false

    /// Whether the sound is the built-in test beep.
    var isTestSound: Bool { audio == "test" }

    /// Checks the sound options together (called from the command's `validate`, not the
    /// group's own, so that a preset's entries can be checked one by one).
    func validateSound() throws {
        guard audio != nil else {
            let given = [audioCodec.map { _ in "--audio-codec" }, audioBitrate.map { _ in "--audio-bitrate" },
                         audioRate.map { _ in "--audio-rate" }, audioChannels.map { _ in "--audio-channels" },
                         audioOffset.map { _ in "--audio-offset" }].compactMap { $0 }
            if let first = given.first { throw ValidationError("\(first) applies to --audio: add --audio DEVICE") }
            return
        }
        if let rate = audioRate, !(8_000...192_000).contains(rate) {
            throw ValidationError("--audio-rate must be 8000 to 192000 Hz")
        }
        if let channels = audioChannels, !(1...2).contains(channels) {
            throw ValidationError("--audio-channels must be 1 or 2")
        }
        if audioCodec == .pcm && audioBitrate != nil {
            throw ValidationError("--audio-bitrate applies to aac and opus; PCM has a fixed rate")
        }
    }

    /// The codec for `container`, refusing what it cannot carry (exit 2).
    func codec(for container: Container, alsoFor branches: [OutputSpec] = []) throws(UsageError) -> AudioCodec {
        guard container != .h264 else {
            throw UsageError("a raw H.264 stream cannot carry sound (--audio): name the output .mp4, .mkv or .ts, "
                             + "or choose one with --container")
        }
        // Opus by default only where every output carries it.
        let codec = audioCodec ?? (container == .mkv && branches.allSatisfy { $0.carries(.opus) } ? .opus : .aac)
        if codec == .pcm && container != .mkv {
            throw UsageError("--audio-codec pcm needs Matroska: name the output .mkv, or use aac or opus")
        }
        for branch in branches where !branch.carries(codec) {
            let others = AudioCodec.allCases.filter { branch.carries($0) }.map(\.rawValue).joined(separator: " or ")
            throw UsageError("-o \(branch.name) cannot carry \(codec.rawValue) sound: use --audio-codec \(others)")
        }
        return codec
    }
}

extension AudioOptions {
    /// Opens `--audio`: the test sound, or an ALSA device.
    func openSource(frameRate: FrameRate, logger: Logging.Logger) throws -> any AudioSource {
        if isTestSound {
            return TestToneSource(sampleRate: audioRate ?? 48_000, channels: audioChannels ?? 2, frameRate: frameRate)
        }
        guard let audio else { preconditionFailure("called with --audio") }
        return try ALSASource(device: audio, sampleRate: audioRate, channels: audioChannels, logger: logger)
    }
}
