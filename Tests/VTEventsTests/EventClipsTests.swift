import Foundation
import Synchronization
import Testing
import VTCore
import VTOutput
@testable import VTEvents

/// `EventClips` driven as the recorder drives it, by a stand-in encoder with no delay: 10
/// pictures a second, a keyframe every 10 and wherever the clips ask for one, sound in 0.1 s
/// packets after each picture. The clips' files are stand-ins that keep what they were given.
struct EventClipsTests {
    /// What each clip file was given: picture numbers, and sound packets' first samples.
    final class Files: Sendable {
        let written = Mutex<[String: (pictures: [Int], sound: [Int64], finished: Bool)]>([:])

        func pictures(_ path: String) -> [Int] { written.withLock { $0[path]?.pictures ?? [] } }
        func sound(_ path: String) -> [Int64] { written.withLock { $0[path]?.sound ?? [] } }
        func finished(_ path: String) -> Bool { written.withLock { $0[path]?.finished ?? false } }
    }

    final class StandInFile: MediaOutput {
        let path: String
        let files: Files
        var statistics = OutputStatistics()

        init(_ path: String, _ files: Files) {
            self.path = path
            self.files = files
            files.written.withLock { $0[path] = ([], [], false) }
        }

        var paths: [String] { [path] }
        var unusedFile: String? { nil }
        func writeHeader(_ format: VideoFormatDescription) throws(OutputError) {}
        func write(_ frame: EncodedFrame) throws(OutputError) {
            statistics.frames += 1
            files.written.withLock { $0[path]!.pictures.append(Int(frame.pts.value)) }
        }
        func writeAudio(_ packet: EncodedAudioPacket) throws(OutputError) {
            files.written.withLock { $0[path]!.sound.append(packet.pts) }
        }
        func finish(keepEmpty: Bool) throws(OutputError) { files.written.withLock { $0[path]!.finished = true } }
        func abandon() {}
    }

    static let format = VideoFormatDescription(width: 64, height: 64, sequenceParameterSets: [[0x67]],
                                               pictureParameterSets: [[0x68]])

    /// Runs `frames` pictures through clips with the given roll, sending `requests[n]` just
    /// before picture n is written; returns the files and the report.
    static func run(frames: Int, preRoll: Double = 2, postRoll: Double = 1, maxClip: Double? = nil, sound: Bool = false,
                    requests: [Int: [EventRequest]]) throws -> (Files, EventReport) {
        let files = Files()
        let inbox = EventInbox()
        let template = try OutputTemplate("clip-{n}.mp4", labels: true)
        let clips = EventClips(settings: .init(template: template, preRoll: preRoll, postRoll: postRoll, maxClip: maxClip,
                                               heldBytesLimit: 1_000_000, device: "cam", preset: nil, firstNumber: 0,
                                               audioSampleRate: sound ? 48_000 : nil),
                               inbox: inbox, open: { path throws(OutputError) in StandInFile(path, files) },
                               say: { _ in })
        try clips.writeHeader(format)
        for n in 0..<frames {
            let pts = MediaTime(value: Int64(n), timescale: 10)
            // Asked of every picture, as the recorder asks: it is also how the clips learn the time.
            let asked = clips.requiresKeyFrame(for: FrameToken(UInt64(n)), at: pts)
            let key = n % 10 == 0 || asked
            for request in requests[n] ?? [] { inbox.add(request) }
            try clips.write(EncodedFrame(data: [0, 0, 0, 1, 0x65], pts: pts, dts: pts, isKeyFrame: key,
                                         token: FrameToken(UInt64(n))))
            if sound { try clips.writeAudio(EncodedAudioPacket(data: [1], pts: Int64(n) * 4800, duration: 4800)) }
        }
        try clips.finish(keepEmpty: false)
        return (files, clips.report)
    }

    static func event(_ label: String? = nil, _ duration: Double? = 0, from source: EventRequest.Source = .control)
        -> EventRequest {
        EventRequest(source: source, kind: .begin(label: label, duration: duration))
    }

    @Test func aMomentKeepsThePreRollAndThePostRoll() throws {
        let (files, report) = try Self.run(frames: 100, requests: [45: [Self.event()]])
        #expect(report.clips.count == 1)
        // 4.5 s less 2 s: the keyframe at or before 2.5 s is at 2.0 s; the end at 5.5 s is asked for.
        #expect(files.pictures("clip-0.mp4") == Array(20..<55))
        #expect(files.finished("clip-0.mp4"))
        #expect(report.clips[0].preRoll == 2.5 && report.clips[0].start == 2 && report.clips[0].end == 5.5)
    }

    @Test func anOpenEventLastsUntilItsSourceEndsIt() throws {
        let (files, report) = try Self.run(frames: 200, requests: [
            40: [Self.event("gate", nil)],
            // Motion that starts and ends inside the open event changes nothing.
            60: [Self.event(nil, nil, from: .motion)], 70: [EventRequest(source: .motion, kind: .end)],
            150: [EventRequest(source: .control, kind: .end)],
        ])
        #expect(report.clips.count == 1)
        #expect(report.clips[0].label == "gate")
        #expect(files.pictures("clip-0.mp4") == Array(20..<160), "\(report.clips)")
    }

    @Test func maxClipCutsAtKeyframesAndClipsNeverOverlap() throws {
        let (files, report) = try Self.run(frames: 200, preRoll: 3, maxClip: 2.5, requests: [
            50: [Self.event()], 80: [Self.event()],
            // Within the pre-roll of the first clip's end: starts where it ended.
            100: [Self.event()],
        ])
        let all = report.clips.map { files.pictures($0.file) }
        let described = "\(all) \(report.clips.map { ($0.start, $0.end, $0.continues) })"
        // Cut at a keyframe asked for at 2.5 s; in the pre-roll, where none can be asked for any
        // more, at the next one the encoder made (a GOP is 1 s here).
        #expect(all.allSatisfy { !$0.isEmpty && $0.count <= 25 + 10 }, "\(described)")
        #expect(all.filter { $0.count > 25 }.count == 1, "only the first, cut in its pre-roll: \(described)")
        for (a, b) in zip(all, all.dropFirst()) { #expect(a.last! + 1 == b.first!, "\(described)") }
        // The last event's clip ends before 11 s, its post-roll's end.
        #expect(all.first!.first! == 20 && all.last!.last! == 109, "\(described)")
        // Three events, two of them cut once.
        #expect(report.clips.count == 5 && report.clips.filter(\.continues).count == 2, "\(described)")
    }

    @Test func soundFollowsItsPicturesIntoEachClip() throws {
        let (files, report) = try Self.run(frames: 120, maxClip: 2, sound: true, requests: [50: [Self.event()]])
        #expect(report.clips.count == 2)
        for clip in report.clips {
            let pictures = files.pictures(clip.file)
            let sound = files.sound(clip.file)
            // The sound packet of each picture, from the first to the last (4800 samples a picture).
            #expect(sound == pictures.map { Int64($0) * 4800 }, "\(clip.file): \(pictures) / \(sound)")
        }
    }
}
