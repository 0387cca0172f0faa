import Foundation

/// The sound's level as a meter shows it: the loudest sample of about the last half second, in
/// dB below full scale, for the status (`/status`, the page).
struct LevelMeter {
    private let window: Int
    private var framesInWindow = 0
    private var peak: Float = 0
    /// The peak of the window before, kept while the next one fills.
    private var shown: Float?

    init(sampleRate: Int) {
        window = max(1, sampleRate / 2)
    }

    var levelDBFS: Double? {
        guard shown != nil || framesInWindow > 0 else { return nil }
        let level = max(shown ?? 0, peak)
        // −100 dBFS stands for silence (a level of 0).
        return max(-100, 20 * log10(Double(max(level, 1e-5))))
    }

    mutating func take(_ chunk: AudioChunk, format: AudioSampleFormat) {
        var loudest: Float = 0
        chunk.data.withUnsafeBytes { raw in
            switch format {
            case .s16:
                for sample in raw.bindMemory(to: Int16.self) { loudest = max(loudest, abs(Float(sample)) / 32768) }
            case .s32:
                for sample in raw.bindMemory(to: Int32.self) { loudest = max(loudest, abs(Float(sample)) / 2_147_483_648) }
            case .float32:
                for sample in raw.bindMemory(to: Float.self) where sample.isFinite { loudest = max(loudest, abs(sample)) }
            }
        }
        peak = max(peak, loudest)
        framesInWindow += chunk.frames
        if framesInWindow >= window {
            shown = peak
            peak = 0
            framesInWindow = 0
        }
    }
}
