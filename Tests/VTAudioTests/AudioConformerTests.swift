import Foundation
import Testing
@testable import VTAudio
import VTCore

/// The conformer against a simulated microphone whose sample clock runs fast or slow: chunks
/// stamped with the true CLOCK_MONOTONIC time of their first sample, holding a beep that
/// starts on every true whole second. Hours of sound run in seconds, so drift that would take
/// minutes to show in a live recording is measured here over ten simulated minutes, through
/// the real resampler and a real (PCM) encoder.
@Suite struct AudioConformerTests {
    /// A microphone at `rate` × (1 + ppm/1e6) samples per true second, from true time `start`.
    struct Microphone {
        let rate = 48_000
        let ppm: Double
        let start: Int64 = 5_000_000_000
        let chunk = 480
        var next = 0

        /// The true time of sample n, in nanoseconds.
        func time(_ n: Int) -> Int64 {
            start + Int64((Double(n) / (Double(rate) * (1 + ppm / 1e6)) * 1e9).rounded())
        }

        /// A beep of 50 ms from every true whole second, mono 16-bit.
        mutating func nextChunk() -> AudioChunk {
            var samples = [Int16](repeating: 0, count: chunk)
            for i in 0..<chunk {
                let into = time(next + i) % 1_000_000_000
                if into < 50_000_000 { samples[i] = 12_000 }
            }
            defer { next += chunk }
            return AudioChunk(data: samples.withUnsafeBytes { Array($0) }, frames: chunk, time: time(next))
        }

        mutating func skip(_ frames: Int) { next += frames }
    }

    /// Runs `seconds` of the microphone through a conformer whose picture starts at `origin`;
    /// `between` may change the microphone before each chunk. Returns the output samples and
    /// the conformer's statistics.
    static func run(_ microphone: inout Microphone, seconds: Double, origin: Int64,
                    between: (inout Microphone) -> Void = { _ in }) throws -> (samples: [Int16], statistics: AudioConformer.Statistics) {
        let format = AudioCaptureFormat(sampleRate: 48_000, channels: 1, sampleFormat: .s16, isLive: true, name: "simulated")
        let encoder = try AudioCompressionSession(codec: .pcm, sampleRate: 48_000, channels: 1, bitRate: nil)
        let conformer = try AudioConformer(source: format, encoder: encoder)
        var data: [UInt8] = []
        let end = origin + Int64(seconds * 1e9)
        while microphone.time(microphone.next) < end {
            between(&microphone)
            try conformer.take(microphone.nextChunk(), origin: origin)
            try encoder.release(upTo: .max)
            for packet in encoder.takePackets() { data += packet.data }
        }
        conformer.setEnd(Int64(seconds * 48_000))
        try conformer.finish()
        for packet in encoder.takePackets() { data += packet.data }
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        return (samples, conformer.statistics)
    }

    /// Where each beep starts in the output, in samples.
    static func onsets(_ samples: [Int16]) -> [Int] {
        var found: [Int] = []
        var quiet = 0
        for (index, value) in samples.enumerated() {
            if abs(Int(value)) > 6000 {
                if quiet > 1000 || found.isEmpty { found.append(index) }
                quiet = 0
            } else {
                quiet += 1
            }
        }
        return found
    }

    /// Ten simulated minutes at ±300 ppm (five at ±1000): every beep within a millisecond of its
    /// second once the correction has learnt the rate (within 5 ms while it learns, in the first
    /// minute).
    @Test(arguments: [(300.0, 600.0), (-300.0, 600.0), (1000.0, 300.0), (-1000.0, 300.0)])
    func driftIsCorrectedWithoutJumps(ppm: Double, seconds: Double) throws {
        var microphone = Microphone(ppm: ppm)
        // The picture starts at a true whole second, a little after the microphone.
        let origin: Int64 = 6_000_000_000
        let (samples, statistics) = try Self.run(&microphone, seconds: seconds, origin: origin)
        #expect(samples.count == Int(seconds) * 48_000)
        let onsets = Self.onsets(samples)
        // One beep a second (one more when the last is due within a millisecond of the end).
        #expect((Int(seconds)...Int(seconds) + 1).contains(onsets.count), "\(onsets.prefix(5))…")
        #expect(Set(onsets.map { ($0 + 24_000) / 48_000 }).count == onsets.count)
        // Each beep is due at a whole second of the picture: 1 ms at most off, all along
        // (uncorrected, 300 ppm would be 180 ms late by the end).
        let errors = onsets.map { onset in Double(onset - (onset + 24_000) / 48_000 * 48_000) / 48.0 }
        let learning = errors.prefix(60).map(abs).max() ?? .infinity
        let settled = errors.dropFirst(60).map(abs).max() ?? .infinity
        #expect(learning <= 5.0, "worst \(learning) ms in the first minute: \(errors.prefix(20))")
        #expect(settled <= 1.0, "worst \(settled) ms after the first minute; the last ones \(errors.suffix(3))")
        #expect(statistics.gaps == 0 && statistics.overlapSamples == 0, "\(statistics)")
        let measured = try #require(statistics.driftPPM)
        #expect(abs(measured - ppm) <= 5, "measured \(measured) ppm for \(ppm)")
    }

    /// An overrun loses 300 ms of sound: silence fills exactly that, and the beeps after it
    /// are still on their seconds.
    @Test func aGapIsFilledWithSilence() throws {
        var microphone = Microphone(ppm: 200)
        var skipped = false
        let (samples, statistics) = try Self.run(&microphone, seconds: 20, origin: 6_000_000_000) { microphone in
            if !skipped && microphone.time(microphone.next) > 16_500_000_000 {
                microphone.skip(14_400)
                skipped = true
            }
        }
        #expect(statistics.gaps == 1)
        #expect(abs(Double(statistics.silenceSamples) - 14_400) <= 48, "\(statistics)")
        let onsets = Self.onsets(samples)
        #expect(onsets.count == 20)
        for (k, onset) in onsets.enumerated() {
            #expect(abs(onset - k * 48_000) <= 48, "beep \(k) at \(onset)")
        }
    }

    /// Sound from before the picture's start is dropped; a microphone that starts after it
    /// gets silence in front.
    @Test(arguments: [4_500_000_000 as Int64, 6_000_000_000])
    func theStartLinesUpWithThePicture(origin: Int64) throws {
        var microphone = Microphone(ppm: 0)
        let (samples, statistics) = try Self.run(&microphone, seconds: 3, origin: origin)
        #expect(samples.count == 3 * 48_000)
        let onsets = Self.onsets(samples)
        // Beeps at true seconds 5, 6, 7 (and 8 when the picture starts at 6 s).
        let expected: [Int] = (5...9).map { (second: Int64) -> Int in
            Int((second * 1_000_000_000 - origin) * 48 / 1_000_000)
        }.filter { $0 >= 0 && $0 < 3 * 48_000 }
        #expect(onsets == expected, "\(statistics)")
        if origin < microphone.start {
            #expect(statistics.leadingSilence == Int64(microphone.start - origin) * 48 / 1_000_000)
        } else {
            #expect(statistics.droppedBeforeStart == Int64(origin - microphone.start) * 48 / 1_000_000)
        }
    }
}
