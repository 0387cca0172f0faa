import Foundation
import Testing
import VTCore
import VTTestSupport
@testable import VTH264

/// Bounded fuzz runs of every reader of untrusted H.264 bytes: damaged input must end in a
/// `BitstreamError` (typed throws make any other error impossible), never a trap, a hang or a
/// read out of bounds, and what the readers do accept must hold together (ranges inside the
/// input, parameter sets that write back as they were read).
///
/// Each run prints its seed; `FUZZ_SEED=<seed> swift test --filter H264FuzzTests` replays it,
/// and FUZZ_ITERATIONS makes it longer. `make fuzz` runs the same readers under libFuzzer.
@Suite struct H264FuzzTests {
    private static let tokens: [[UInt8]] = [
        [0x67], [0x68], [0x65], [0x41], [0x06], [0x09], [0x27, 0x64, 0x00, 0x1F], [0x80], [0xFF, 0xFF],
        [0x00, 0x00, 0xFF, 0xFF], [0x01, 0x64, 0x00, 0x1F, 0xFF, 0xE1],
    ]

    private func corpus() throws -> H264FuzzCorpus.Streams {
        try H264FuzzCorpus.streams.get()
    }

    private func expectNoFindings(_ findings: [FuzzFinding]) {
        for finding in findings.prefix(5) { Issue.record("\(finding)") }
    }

    @Test func annexBSplitterAndConversionToAVCC() throws {
        let streams = try corpus()
        var campaign = FuzzCampaign(target: "annexb", corpus: streams.annexB, tokens: Self.tokens, iterations: 6000)
        expectNoFindings(campaign.run(H264FuzzProperties.annexB))
    }

    @Test func avccAccessUnits() throws {
        let streams = try corpus()
        var campaign = FuzzCampaign(target: "avcc", corpus: streams.avccAccessUnits, tokens: Self.tokens,
                                    iterations: 10000)
        expectNoFindings(campaign.run(H264FuzzProperties.avcc))
    }

    @Test func emulationPreventionRoundTrip() throws {
        let streams = try corpus()
        var campaign = FuzzCampaign(target: "emulation-prevention", corpus: streams.sequenceParameterSets + streams.annexB,
                                    iterations: 5000)
        expectNoFindings(campaign.run(H264FuzzProperties.emulationPrevention))
    }

    @Test func sequenceParameterSets() throws {
        let streams = try corpus()
        var campaign = FuzzCampaign(target: "sps", corpus: streams.sequenceParameterSets, tokens: Self.tokens,
                                    iterations: 30000, maximumSize: 1024)
        expectNoFindings(campaign.run(H264FuzzProperties.sequenceParameterSet))
    }

    @Test func pictureParameterSets() throws {
        let streams = try corpus()
        var campaign = FuzzCampaign(target: "pps", corpus: streams.pictureParameterSets, tokens: Self.tokens,
                                    iterations: 30000, maximumSize: 1024)
        expectNoFindings(campaign.run(H264FuzzProperties.pictureParameterSet))
    }

    @Test func avcCRecords() throws {
        let streams = try corpus()
        var campaign = FuzzCampaign(target: "avcc-record", corpus: streams.avcCRecords, tokens: Self.tokens,
                                    iterations: 20000, maximumSize: 2048)
        expectNoFindings(campaign.run(H264FuzzProperties.avcCRecord))
    }

    @Test func streamInspector() throws {
        let streams = try corpus()
        var campaign = FuzzCampaign(target: "inspect", corpus: streams.annexB, tokens: Self.tokens, iterations: 8000)
        expectNoFindings(campaign.run(H264FuzzProperties.inspect))
    }

    @Test func rawStreamAccessUnits() throws {
        let streams = try corpus()
        var campaign = FuzzCampaign(target: "access-units", corpus: streams.annexB, tokens: Self.tokens, iterations: 4000)
        expectNoFindings(campaign.run(H264FuzzProperties.accessUnits))
    }

    /// The properties must be able to fail: empty, overlapping or overlong ranges, and a
    /// parameter set that changes when written back, are caught.
    @Test func propertiesCatchBrokenReaders() {
        #expect(H264FuzzProperties.checkRanges([2..<2], in: [0, 0, 1, 0]) != nil)
        #expect(H264FuzzProperties.checkRanges([3..<5, 4..<6], in: [UInt8](repeating: 9, count: 8)) != nil)
        #expect(H264FuzzProperties.checkRanges([3..<9], in: [UInt8](repeating: 9, count: 8)) != nil)
        var sps = SequenceParameterSet(profileIdc: 66, levelIdc: 30, width: 64, height: 48)
        sps.vui = VideoUsabilityInformation()
        #expect(H264FuzzProperties.sequenceParameterSet(sps.nalUnit()) == nil)
        #expect(H264FuzzProperties.checkRoundTrip(sps, SequenceParameterSet(profileIdc: 66, levelIdc: 30, width: 64, height: 32)) != nil)
    }
}
