import VTAudio
import VTCore
import VTOutput

/// The sound of a recording put beside its picture in the output: the sound's clock is set
/// from the first picture's, and after each frame written the sound up to the latest
/// presentation time written goes into the file with it, so the two are interleaved (and a
/// segment's file gets the sound up to its last picture). Used by the encoder thread.
final class SoundInterleaver {
    let audio: AudioRecorder
    /// How long a frame lasts: where the picture ends after the latest frame.
    private let frameDuration: MediaTime
    /// The latest presentation time written and the frame after it: where the picture ends.
    private var pictureEnd: MediaTime?

    init(_ audio: AudioRecorder, frameDuration: MediaTime) {
        self.audio = audio
        self.frameDuration = frameDuration
    }

    /// The first picture goes into the encoder at `pts`, taken at `captureTime`
    /// (CLOCK_MONOTONIC; now, for a source without a capture clock): the picture's 0 on the
    /// clock the sound is stamped with.
    func firstPicture(pts: MediaTime, captureTime: Int64?) {
        let ptsNanoseconds = pts.ticks(since: .zero, timescale: 1_000_000_000)
        audio.setOrigin((captureTime ?? MonotonicClock.nanoseconds()) - ptsNanoseconds)
    }

    /// After `frame` was written to `output`: the sound up to where the picture has come, and
    /// the sound source told how far that is.
    func frameWritten(_ frame: EncodedFrame, to output: any MediaOutput) throws(OutputError) {
        let frameEnd = frame.pts + frameDuration
        if pictureEnd.map({ frameEnd > $0 }) ?? true { pictureEnd = frameEnd }
        let rate = Int32(audio.format.sampleRate)
        let latest = (pictureEnd ?? frameEnd).ticks(since: frameDuration, timescale: rate)
        audio.pictureWritten(upTo: Double(latest) / Double(rate))
        for packet in audio.packets(through: latest) {
            try output.writeAudio(packet)
        }
    }

    /// At a clean end, once every frame is written: the sound to the picture's end, all of it,
    /// each packet written by `write`.
    func finish(_ write: ([EncodedAudioPacket]) throws -> Void) throws {
        try write(try audio.finish(atSeconds: pictureEnd?.seconds ?? 0))
    }
}
