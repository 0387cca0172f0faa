import Foundation
import Testing
import VTCore
@testable import VTOutput

/// An access unit's Annex B form is made once, by the first output that writes it, and only
/// when one does: a raw or MPEG-TS recording takes the same bytes as the streams beside it.
@Suite struct SharedAnnexBTests {
    typealias Fixture = AnnexBWriterTests

    /// An output that only notes how it was given each frame.
    final class Spy: MediaOutput {
        let writesAnnexB: Bool
        var plain = 0
        var shared: [SharedAnnexB] = []
        init(writesAnnexB: Bool) { self.writesAnnexB = writesAnnexB }
        var paths: [String] { [] }
        var statistics: OutputStatistics { OutputStatistics() }
        var unusedFile: String? { nil }
        func writeHeader(_ format: VideoFormatDescription) throws(OutputError) {}
        func write(_ frame: EncodedFrame) throws(OutputError) { plain += 1 }
        func write(_ frame: EncodedFrame, sharing annexB: SharedAnnexB) throws(OutputError) { shared.append(annexB) }
        func writeAudio(_ packet: EncodedAudioPacket) throws(OutputError) {}
        func finish(keepEmpty: Bool) throws(OutputError) {}
        func abandon() {}
    }

    static let key = Fixture.frame([Fixture.sei, Fixture.idrSlice], key: true)

    @Test func theSizeIsTheAccessUnitsWithTheParameterSetsBeforeAKeyframe() throws {
        let shared = SharedAnnexB(Self.key, format: Fixture.format)
        #expect(!shared.isMade)
        #expect(shared.byteCount == (try shared.bytes()).count && shared.isMade)
        let plain = SharedAnnexB(Fixture.frame([Fixture.pSlice], key: false, index: 1), format: Fixture.format)
        #expect(plain.byteCount == (try plain.bytes()).count)
    }

    /// A raw stream written from the shared bytes is the raw stream written from the frames.
    @Test func aRawStreamTakesTheSharedBytes() throws {
        let (converted, shared) = (Fixture.temporaryPath("a.h264"), Fixture.temporaryPath("b.h264"))
        defer { for path in [converted, shared] { try? FileManager.default.removeItem(atPath: path) } }
        let frames = [Self.key, Fixture.frame([Fixture.pSlice], key: false, index: 1)]
        let one = try AnnexBWriter(path: converted, overwrite: false)
        let other = try AnnexBWriter(path: shared, overwrite: false)
        for writer in [one, other] { try writer.writeHeader(Fixture.format) }
        for frame in frames {
            try one.write(frame)
            let annexB = SharedAnnexB(frame, format: Fixture.format)
            try other.write(frame, sharing: annexB)
            #expect(annexB.isMade, "the recording makes the bytes the streams then send")
        }
        for writer in [one, other] { try writer.finish(keepEmpty: false) }
        #expect(try Fixture.contents(shared) == Fixture.contents(converted))
        #expect(other.statistics == one.statistics)
    }

    /// The fan-out makes the Annex B form only for an output that writes it.
    @Test func theFanOutSharesTheBytesOnlyWithOutputsThatWriteAnnexB() throws {
        for writesAnnexB in [false, true] {
            let recording = Spy(writesAnnexB: writesAnnexB)
            let fanOut = OutputFanOut(recording: recording, branches: [], beside: [])
            try fanOut.writeHeader(Fixture.format)
            try fanOut.write(Self.key)
            #expect(recording.plain == (writesAnnexB ? 0 : 1) && recording.shared.count == (writesAnnexB ? 1 : 0))
            try fanOut.finish(keepEmpty: false)
        }
    }

    /// A stream's queue counts the Annex B form it holds beside the access unit.
    @Test func aStreamsQueueCountsBothForms() {
        let shared = SharedAnnexB(Self.key, format: Fixture.format)
        let packet = BranchPacket.frame(Self.key, Fixture.format, annexB: shared)
        #expect(packet.byteCount == Self.key.data.count + shared.byteCount)
        #expect(BranchPacket.frame(Self.key, Fixture.format).byteCount == Self.key.data.count)
    }
}
