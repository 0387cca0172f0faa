import Foundation
import Testing
import VTCore
import VTOutput

/// `-o` templates: what each field expands to, and which templates are refused.
@Suite struct OutputTemplateTests {
    /// 2024-03-05 07:08:09 UTC, a Tuesday, day 65 of a leap year.
    static let date = Date(timeIntervalSince1970: 1_709_622_489)
    static let utc = TimeZone(identifier: "UTC")!

    static func expand(_ text: String, device: String = "video0", preset: String? = nil, segment: Int = 0,
                       zone: TimeZone = utc) throws -> String {
        try OutputTemplate(text).expand(.init(date: date, timeZone: zone, device: device, preset: preset,
                                              segment: segment))
    }

    @Test func plainPathIsItself() throws {
        #expect(try Self.expand("/tmp/out.h264") == "/tmp/out.h264")
        #expect(try Self.expand("-") == "-")
        #expect(try OutputTemplate("-").isStandardOutput)
        #expect(try !OutputTemplate("out.h264").numbersSegments)
    }

    @Test func dateFieldsAreStrftimes() throws {
        #expect(try Self.expand("rec-%Y%m%d-%H%M%S.h264") == "rec-20240305-070809.h264")
        #expect(try Self.expand("%F_%T") == "2024-03-05_07:08:09")
        #expect(try Self.expand("%a %b %j %s") == "Tue Mar 065 1709622489")
        #expect(try Self.expand("%-d.%-m.%y") == "5.3.24")
    }

    @Test func dateFieldsUseTheGivenZone() throws {
        let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        #expect(try Self.expand("%Y%m%d-%H%M%S %z %s", zone: tokyo) == "20240305-160809 +0900 1709622489")
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        #expect(try Self.expand("%d %H %z %s", zone: newYork) == "05 02 -0500 1709622489")
        // Summer time, in July.
        let july = try OutputTemplate("%H %z").expand(.init(date: Self.date.addingTimeInterval(120 * 86_400),
                                                           timeZone: newYork, device: ""))
        #expect(july == "03 -0400")
    }

    /// Without a zone, fields are the local time exactly as date(1) prints them in this
    /// process's zone, zone name included.
    @Test func localTimeAgreesWithDate() throws {
        let format = "%Y%m%d-%H%M%S %z %Z %a %j %s"
        let ours = try OutputTemplate(format).expand(.init(date: Self.date, device: ""))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/date")
        process.arguments = ["-d", "@1709622489", "+" + format]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(ours == String(decoding: output, as: UTF8.self).trimmingCharacters(in: .newlines))
    }

    @Test func doublePercentIsOnePercent() throws {
        #expect(try Self.expand("100%%-%Y%%.h264") == "100%-2024%.h264")
    }

    @Test func namedFields() throws {
        #expect(try Self.expand("{device}-{preset}-{n}.h264", device: "video2", segment: 7) == "video2-default-7.h264")
        #expect(try Self.expand("{preset}", preset: "archive") == "archive")
        #expect(try Self.expand("seg-{n:03}.h264", segment: 7) == "seg-007.h264")
        #expect(try Self.expand("seg-{n:03}.h264", segment: 1234) == "seg-1234.h264")
        #expect(try Self.expand("{n:01}", segment: 0) == "0")
        #expect(try OutputTemplate("dir/{n}.h264").numbersSegments)
        #expect(try OutputTemplate("dir/{n:04}.h264").numbersSegments)
    }

    @Test func everythingTogether() throws {
        #expect(try Self.expand("/rec/{device}/%Y-%m-%d/{preset}-%H%M%S-{n:02}.h264", device: "clip", segment: 3)
                    == "/rec/clip/2024-03-05/default-070809-03.h264")
    }

    @Test(arguments: [
        ("out-{name}.h264", OutputTemplateError.unknownField(name: "name", template: "out-{name}.h264")),
        ("{N}", .unknownField(name: "N", template: "{N}")),
        ("{}", .unknownField(name: "", template: "{}")),
        ("out-{n.h264", .unclosedField(template: "out-{n.h264")),
        ("{n:3}", .badFieldFormat(field: "n:3", template: "{n:3}")),
        ("{n:0x}", .badFieldFormat(field: "n:0x", template: "{n:0x}")),
        ("{device:03}", .badFieldFormat(field: "device:03", template: "{device:03}")),
        ("100%.h264", .unknownConversion("%.", template: "100%.h264")),
        ("out%", .unknownConversion("%", template: "out%")),
        ("%q", .unknownConversion("%q", template: "%q")),
        ("%n", .unknownConversion("%n", template: "%n")),
        ("%999Y", .conversionTooWide("%999Y", maximum: 64, template: "%999Y")),
    ])
    func badTemplatesAreRefused(_ text: String, _ expected: OutputTemplateError) throws {
        #expect(throws: expected) { try OutputTemplate(text) }
        #expect(expected.exitStatus == .usage)
    }

    @Test func unknownFieldMessageNamesIt() {
        let message = OutputTemplateError.unknownField(name: "camera", template: "x-{camera}").description
        #expect(message.contains("{camera}") && message.contains("{device}") && message.contains("x-{camera}"))
    }
}
