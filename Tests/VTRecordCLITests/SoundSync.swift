import Foundation
import Testing

/// Where a recording's beeps and flashes are, as FFmpeg decodes them: the test pattern (or the
/// fake camera) flashes its lower half white once a second, the test sound (or the fake
/// microphone) beeps at the same instants. Times are the decoder's, as FFmpeg's `movie` and
/// `amovie` sources give them (the file's own times, without the command line's re-timing of
/// a stream that starts late), so a reader's start offset cannot hide a shift between tracks.
struct SoundSync {
    /// Presentation times of the flash frames (lower half bright).
    var flashes: [Double]
    /// Where sound starts after silence (FFmpeg's silencedetect `silence_end`).
    var onsets: [Double]
    /// Where sound stops (`silence_start`): a beep's end.
    var silences: [Double]
    /// The end of the last video and the last audio packet.
    var videoEnd: Double
    var audioEnd: Double

    static func measure(_ file: String) throws -> SoundSync {
        let sound = try Tools.run("ffmpeg", ["-nostats", "-f", "lavfi", "-i",
                                             "amovie=\(file),silencedetect=n=-30dB:d=0.05", "-f", "null", "-"])
        try #require(sound.status == 0, "ffmpeg could not decode the sound of \(file): \(sound.stderr)")
        let picture = try Tools.run("ffmpeg", ["-nostats", "-f", "lavfi", "-i",
                                               "movie=\(file),crop=iw:ih/2:0:ih/2,signalstats,metadata=print:key=lavfi.signalstats.YAVG",
                                               "-f", "null", "-"])
        try #require(picture.status == 0, "ffmpeg could not decode the picture of \(file): \(picture.stderr)")
        var flashes: [Double] = []
        var time: Double?
        for line in picture.stderr.split(separator: "\n") {
            if let range = line.range(of: "pts_time:") {
                time = Double(line[range.upperBound...].split(separator: " ").first ?? "")
            } else if let range = line.range(of: "YAVG="), let value = Double(line[range.upperBound...]), let t = time {
                if value > 200 { flashes.append(t) }
            }
        }
        func values(_ key: String) -> [Double] {
            sound.stderr.split(separator: "\n").compactMap { line in
                guard let range = line.range(of: key) else { return nil }
                return Double(line[range.upperBound...].split(separator: " ").first ?? "")
            }
        }
        return SoundSync(flashes: flashes, onsets: values("silence_end: "), silences: values("silence_start: "),
                         videoEnd: try packetEnd(file, stream: "v"), audioEnd: try packetEnd(file, stream: "a"))
    }

    /// The latest pts + duration of a stream's packets, in seconds.
    static func packetEnd(_ file: String, stream: String) throws -> Double {
        let json = try Tools.ffprobe(file, ["-select_streams", stream, "-show_entries", "packet=pts_time,duration_time",
                                            "-show_packets"])
        let packets = json["packets"] as? [[String: Any]] ?? []
        return packets.compactMap { packet -> Double? in
            guard let pts = (packet["pts_time"] as? String).flatMap(Double.init) else { return nil }
            return pts + ((packet["duration_time"] as? String).flatMap(Double.init) ?? 0)
        }.max() ?? 0
    }

    /// For every flash, how far its beep starts from it (seconds, positive when the sound is
    /// late): the onset nearest the flash, or for a beep that starts the file (no silence
    /// before it) its end minus the beep's length. nil where no beep is found within 0.3 s.
    ///
    /// A beep shorter than `beepLength` lost its start or its end to a gap (a device that came
    /// back, or went away, in the middle of it): the edge the gap did not cut is timed, which
    /// is the one nearer its place; a sound that is late or early has both edges off.
    func offsets(beepLength: Double = 0.1) -> [Double?] {
        flashes.map { flash in
            if let onset = onsets.min(by: { abs($0 - flash) < abs($1 - flash) }), abs(onset - flash) < 0.3 {
                if let end = silences.first(where: { $0 > onset }), end - onset < beepLength * 0.9 {
                    let byEnd = end - beepLength - flash
                    return abs(byEnd) < abs(onset - flash) ? byEnd : onset - flash
                }
                return onset - flash
            }
            if let end = silences.min(by: { abs($0 - flash - beepLength) < abs($1 - flash - beepLength) }),
               abs(end - flash - beepLength) < 0.3 {
                return end - beepLength - flash
            }
            return nil
        }
    }
}
