import VTCore

/// How a source's samples are stored: interleaved, native byte order.
public enum AudioSampleFormat: String, Sendable, CaseIterable {
    case s16
    case s32
    case float32 = "float"

    public var bytesPerSample: Int {
        switch self {
        case .s16: 2
        case .s32, .float32: 4
        }
    }
}

/// What a sound source gives.
public struct AudioCaptureFormat: Sendable, Equatable {
    public var sampleRate: Int
    public var channels: Int
    public var sampleFormat: AudioSampleFormat
    /// A device that captures in real time: its chunks carry CLOCK_MONOTONIC times, and it is
    /// never made to wait. A source that is not live (the test sound) makes its samples on
    /// the recording's own timeline, as fast as they are taken.
    public var isLive: Bool
    /// The device as opened, for the summary ("hw:CARD=C920,DEV=0", "test").
    public var name: String

    public init(sampleRate: Int, channels: Int, sampleFormat: AudioSampleFormat, isLive: Bool, name: String) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.sampleFormat = sampleFormat
        self.isLive = isLive
        self.name = name
    }

    /// Bytes of one sample frame (a sample of every channel).
    public var bytesPerFrame: Int { channels * sampleFormat.bytesPerSample }
}

/// Samples as a source captured them, interleaved.
public struct AudioChunk: Sendable {
    public var data: [UInt8]
    /// Sample frames in `data`.
    public var frames: Int
    /// CLOCK_MONOTONIC nanoseconds when the first sample was taken, from a live source; nil
    /// from a source that is not live, whose chunks follow one another on the recording's
    /// timeline from its 0.
    public var time: Int64?
    /// Samples were lost just before this chunk (an overrun, a device back after going away):
    /// whatever difference its time shows is a gap, however small.
    public var followsLoss: Bool

    public init(data: [UInt8], frames: Int, time: Int64?, followsLoss: Bool = false) {
        self.data = data
        self.frames = frames
        self.time = time
        self.followsLoss = followsLoss
    }
}

/// What a sound source counted.
public struct AudioCaptureStatistics: Sendable, Equatable {
    /// Overruns: the device's buffer filled before it was read, and samples were lost.
    public var overruns = 0
    /// Times the device went away (unplugged, stopped answering).
    public var disconnects = 0
    /// Times it came back.
    public var reconnects = 0

    public init() {}
}

/// A sound source (AVFoundation's audio capture input): a microphone through ALSA, or the test
/// sound. The audio thread calls `nextChunk` in a loop; any thread may call `stop`.
public protocol AudioSource: AnyObject, Sendable {
    var format: AudioCaptureFormat { get }
    var statistics: AudioCaptureStatistics { get }
    /// The next samples, waiting for them; nil once the source is stopped. A device that went
    /// away throws `AudioCaptureError.unplugged`; `reopen` may bring it back.
    func nextChunk() throws(AudioCaptureError) -> AudioChunk?
    /// Opens the device again after it went away; throws while it is still gone.
    func reopen() throws(AudioCaptureError)
    /// Makes a waiting `nextChunk` return nil, now and from then on. Safe from any thread.
    func stop()
    /// Gives the device back.
    func close()
    /// How far the picture has been written, in seconds of the recording's timeline: a source
    /// that is not live makes no sound far ahead of it.
    func pictureReached(_ seconds: Double)
}

extension AudioSource {
    public func reopen() throws(AudioCaptureError) {}
    public func close() {}
    public func pictureReached(_ seconds: Double) {}
}
