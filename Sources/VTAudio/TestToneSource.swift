import Foundation
import Synchronization
import VTCore

/// The test sound (`--audio test`): silence with a 1 kHz beep of 100 ms starting exactly when
/// the test pattern flashes (`FlashSchedule`), once a second.
///
/// It is not live: sample n is made for time n ÷ rate of the recording's timeline, so the
/// beeps sit where the flashes are whatever the machine does, and a recording's sync can be
/// checked by anyone. It keeps at most `lead` seconds ahead of the picture written
/// (`pictureReached`), so a recording of a file or an unpaced pattern does not make its whole
/// sound up front.
///
/// Sendable: how far the picture is and whether it was stopped sit behind a mutex, with a
/// semaphore to wake the audio thread when either changes; where the sound is sits behind
/// another, which only the audio thread takes.
public final class TestToneSource: AudioSource, Sendable {
    public let format: AudioCaptureFormat
    public var statistics: AudioCaptureStatistics { AudioCaptureStatistics() }

    /// Samples per chunk.
    static let chunkFrames = 1024
    /// How far ahead of the picture the sound may be made, in seconds.
    static let lead = 0.5

    private let schedule: FlashSchedule
    private let progress = Mutex(Progress())
    /// Signalled when `progress` changes: the audio thread waiting for the picture looks again.
    private let changed = DispatchSemaphore(value: 0)
    private let position = Mutex(Position())

    private struct Progress {
        var picture = 0.0
        var stopped = false
    }

    /// Where the sound is: the next sample to make and the beep it may fall in.
    private struct Position {
        var nextSample = 0
        var nextBeep = 0
    }

    public init(sampleRate: Int, channels: Int, frameRate: FrameRate) {
        format = AudioCaptureFormat(sampleRate: sampleRate, channels: channels, sampleFormat: .float32,
                                    isLive: false, name: "test")
        schedule = FlashSchedule(frameRate: frameRate)
    }

    public func nextChunk() -> AudioChunk? {
        position.withLock { make(&$0) }
    }

    private func make(_ position: inout Position) -> AudioChunk? {
        let start = position.nextSample
        let rate = format.sampleRate
        while true {
            let (stopped, picture) = progress.withLock { ($0.stopped, $0.picture) }
            if stopped { return nil }
            if Double(start) / Double(rate) <= picture + Self.lead { break }
            changed.wait()
        }

        let frames = Self.chunkFrames
        var data = [UInt8](repeating: 0, count: frames * format.bytesPerFrame)
        let beepLength = Int((FlashSchedule.beepDuration * Double(rate)).rounded())
        // Every beep that sounds in this chunk.
        var second = position.nextBeep
        while true {
            let beepStart = beepSample(second)
            if beepStart >= start + frames { break }
            let beepEnd = beepStart + beepLength
            if beepEnd <= start {
                second += 1
                position.nextBeep = second
                continue
            }
            data.withUnsafeMutableBytes { raw in
                let samples = raw.bindMemory(to: Float.self)
                for n in max(beepStart, start)..<min(beepEnd, start + frames) {
                    let phase = 2 * Double.pi * FlashSchedule.beepFrequency * Double(n - beepStart) / Double(rate)
                    let value = Float(0.5 * sin(phase))
                    for channel in 0..<format.channels { samples[(n - start) * format.channels + channel] = value }
                }
            }
            if beepEnd > start + frames { break }
            second += 1
        }
        position.nextSample += frames
        return AudioChunk(data: data, frames: frames, time: nil)
    }

    /// The sample the beep of second `k` starts at.
    private func beepSample(_ k: Int) -> Int {
        let time = schedule.flashTime(second: k)
        return Int((Int128(time.value) * Int128(format.sampleRate) + Int128(time.timescale) / 2) / Int128(time.timescale))
    }

    public func pictureReached(_ seconds: Double) {
        let moved = progress.withLock { progress -> Bool in
            guard seconds > progress.picture else { return false }
            progress.picture = seconds
            return true
        }
        if moved { changed.signal() }
    }

    public func stop() {
        progress.withLock { $0.stopped = true }
        changed.signal()
    }
}
