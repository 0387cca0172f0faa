import Foundation
import Hummingbird
import NIOCore
import Testing
@testable import VTLiveServer

/// `/recordings`: only the files a template made, directly in its folder, are listed and
/// served, whole or by range.
@Suite struct RecordingRoutesTests {
    /// A recordings folder beside another: `seg-0.mp4` (100 bytes, older) and `seg-1.mp4`
    /// (40 bytes, open), which the pattern names; `other.txt`, which it does not;
    /// `seg-2.mp4`, a symlink to a file of the other folder; `seg-3.mp4`, a folder holding
    /// `seg-4.mp4`.
    struct Fixture {
        let root: TemporaryDirectory
        let folder: String
        let seg0 = Data((0 ..< 100).map { UInt8($0) })
        let seg1 = Data(repeating: 0xA5, count: 40)
        let library: RecordingLibrary

        init() throws {
            root = try TemporaryDirectory()
            folder = root.file("recordings")
            let outside = root.file("private")
            let files = FileManager.default
            try files.createDirectory(atPath: folder, withIntermediateDirectories: false)
            try files.createDirectory(atPath: outside, withIntermediateDirectories: false)
            try files.createDirectory(atPath: folder + "/seg-3.mp4", withIntermediateDirectories: false)
            try root.write("recordings/seg-0.mp4", seg0)
            try root.write("recordings/seg-1.mp4", seg1)
            try root.write("recordings/other.txt", Data("notes".utf8))
            try root.write("recordings/seg-3.mp4/seg-4.mp4", Data("inside".utf8))
            try root.write("private/secret.mp4", Data("secret".utf8))
            try files.createSymbolicLink(atPath: folder + "/seg-2.mp4", withDestinationPath: outside + "/secret.mp4")
            try files.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_700_000_000)], ofItemAtPath: folder + "/seg-0.mp4")
            try files.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_700_000_600)], ofItemAtPath: folder + "/seg-1.mp4")
            let open = folder + "/seg-1.mp4"
            library = RecordingLibrary(sources: [try .init(kind: "recording", directory: folder, pattern: #"seg-[0-9]+\.mp4"#)],
                                       thumbnailer: { path in path.hasSuffix("seg-0.mp4") ? [0xFF, 0xD8, 0xFF, 0xD9] : nil },
                                       isOpen: { $0 == open })
        }
    }

    @Test func onlyTheTemplatesFilesAreServed() async throws {
        let fixture = try Fixture()
        defer { fixture.root.remove() }
        try await TestServer.test(TestServer.make(library: fixture.library), .live) { client in
            let seg0 = try await client.execute(uri: "/recordings/recordings/seg-0.mp4", method: .get)
            #expect(seg0.status == .ok)
            #expect(seg0.bytes == Array(fixture.seg0))
            #expect(seg0.headers[.contentType] == "video/mp4")
            #expect(seg0.headers[.acceptRanges] == "bytes")
            #expect(seg0.headers[.contentDisposition] == "inline; filename=\"seg-0.mp4\"")
            let seg1 = try await client.execute(uri: "/recordings/recordings/seg-1.mp4", method: .get)
            #expect(seg1.status == .ok && seg1.bytes == Array(fixture.seg1))

            for path in ["other.txt", "seg-2.mp4", "seg-3.mp4", "..", "%2e%2e", "%2E%2E", "..%2Fprivate%2Fsecret.mp4",
                         "seg-3.mp4%2Fseg-4.mp4", "%2e%2e%2fprivate%2fsecret.mp4", "seg-0.mp4%00", "seg-0.mp4.", ""] {
                let response = try await client.execute(uri: "/recordings/recordings/\(path)", method: .get)
                #expect(response.status == .notFound, "\(path)")
                #expect(!response.text.contains("secret") && !response.text.contains("inside"), "\(path)")
            }
            for path in ["/recordings/clips/seg-0.mp4", "/recordings/../recordings/seg-0.mp4", "/recordings/recordings/../private/secret.mp4",
                         "/recordings/%2e%2e/private/secret.mp4", "/recordings/recordings/seg-3.mp4/seg-4.mp4"] {
                let response = try await client.execute(uri: path, method: .get)
                #expect(response.status == .notFound, "\(path)")
                #expect(!response.text.contains("secret") && !response.text.contains("inside"), "\(path)")
            }
        }
    }

    @Test func theListingHoldsExactlyTheTemplatesFilesNewestFirst() async throws {
        struct Listing: Decodable {
            struct File: Decodable, Equatable {
                var name: String
                var kind: String
                var bytes: Int64
                var modified: Date
                var open: Bool
                var url: String
                var thumbnail: String?
            }
            var files: [File]
        }
        let fixture = try Fixture()
        defer { fixture.root.remove() }
        try await TestServer.test(TestServer.make(library: fixture.library), .router) { client in
            let response = try await client.execute(uri: "/recordings", method: .get)
            #expect(response.status == .ok && response.headers[.contentType] == "application/json")
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let listing = try decoder.decode(Listing.self, from: Data(response.bytes))
            #expect(listing.files == [
                .init(name: "seg-1.mp4", kind: "recording", bytes: 40, modified: Date(timeIntervalSince1970: 1_700_000_600),
                      open: true, url: "recordings/recordings/seg-1.mp4", thumbnail: "recordings/recordings/seg-1.mp4?thumbnail"),
                .init(name: "seg-0.mp4", kind: "recording", bytes: 100, modified: Date(timeIntervalSince1970: 1_700_000_000),
                      open: false, url: "recordings/recordings/seg-0.mp4", thumbnail: "recordings/recordings/seg-0.mp4?thumbnail"),
            ])
            // A browser asking for HTML gets the page, which links the same files.
            let page = try await client.execute(uri: "/recordings", method: .get, headers: [.accept: "text/html"])
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.text.contains("seg-0.mp4") && page.text.contains("seg-1.mp4") && !page.text.contains("seg-2.mp4"))
        }
    }

    @Test func aThumbnailIsTheThumbnailersStill() async throws {
        let fixture = try Fixture()
        defer { fixture.root.remove() }
        try await TestServer.test(TestServer.make(library: fixture.library), .router) { client in
            let still = try await client.execute(uri: "/recordings/recordings/seg-0.mp4?thumbnail", method: .get)
            #expect(still.status == .ok && still.headers[.contentType] == "image/jpeg")
            #expect(still.bytes == [0xFF, 0xD8, 0xFF, 0xD9])
            let none = try await client.execute(uri: "/recordings/recordings/seg-1.mp4?thumbnail", method: .get)
            #expect(none.status == .notFound)
        }
    }

    @Test func aRangeIsServedAsRFC9110Says() async throws {
        let fixture = try Fixture()
        defer { fixture.root.remove() }
        let bytes = Array(fixture.seg0)
        try await TestServer.test(TestServer.make(library: fixture.library), .live) { client in
            func get(_ range: String) async throws -> TestResponse {
                try await client.execute(uri: "/recordings/recordings/seg-0.mp4", method: .get, headers: [.range: range])
            }
            let first = try await get("bytes=0-9")
            #expect(first.status == .partialContent)
            #expect(first.headers[.contentRange] == "bytes 0-9/100" && first.headers[.contentLength] == "10")
            #expect(first.bytes == Array(bytes[0 ..< 10]))

            let last = try await get("bytes=-5")
            #expect(last.status == .partialContent && last.headers[.contentRange] == "bytes 95-99/100")
            #expect(last.bytes == Array(bytes[95...]))

            let rest = try await get("bytes=5-")
            #expect(rest.status == .partialContent && rest.headers[.contentRange] == "bytes 5-99/100")
            #expect(rest.bytes == Array(bytes[5...]))

            let pastEnd = try await get("bytes=100-")
            #expect(pastEnd.status == .rangeNotSatisfiable)
            #expect(pastEnd.headers[.contentRange] == "bytes */100")
            #expect(pastEnd.body.readableBytes == 0)

            // A range that is not of bytes is ignored (RFC 9110 14.2): the whole file.
            let otherUnit = try await get("pages=0-9")
            #expect(otherUnit.status == .ok && otherUnit.bytes == bytes && otherUnit.headers[.contentRange] == nil)

            // A malformed bytes range is refused, which RFC 9110 14.2 allows ("MAY ignore or reject").
            let malformed = try await get("bytes=abc")
            #expect(malformed.status == .rangeNotSatisfiable && malformed.headers[.contentRange] == "bytes */100")
        }
    }

    @Test(arguments: [
        // No header, or a unit other than bytes: the whole file.
        (nil, ByteRange.whole), ("pages=0-9", .whole), ("", .whole),
        ("bytes=0-9", .part(0 ..< 10)), ("Bytes=0-9", .part(0 ..< 10)), (" bytes=0-9 ", .part(0 ..< 10)),
        ("bytes=5-", .part(5 ..< 100)), ("bytes=-5", .part(95 ..< 100)), ("bytes=-500", .part(0 ..< 100)),
        ("bytes=90-200", .part(90 ..< 100)), ("bytes=99-99", .part(99 ..< 100)),
        // Several ranges: the first alone.
        ("bytes=0-1,5-6", .part(0 ..< 2)),
        ("bytes=100-", .unsatisfiable), ("bytes=100-200", .unsatisfiable), ("bytes=9-3", .unsatisfiable),
        ("bytes=-0", .unsatisfiable), ("bytes=abc", .unsatisfiable), ("bytes=1-x", .unsatisfiable),
        ("bytes=-", .unsatisfiable), ("bytes=+1-2", .unsatisfiable),
    ] as [(String?, ByteRange)])
    func byteRangeOfAHundredBytes(header: String?, expected: ByteRange) {
        #expect(ByteRange(header: header, length: 100) == expected)
    }

    @Test func anEmptyFileHasNoRange() {
        #expect(ByteRange(header: "bytes=0-", length: 0) == .unsatisfiable)
        #expect(ByteRange(header: "bytes=-1", length: 0) == .unsatisfiable)
        #expect(ByteRange(header: nil, length: 0) == .whole)
    }
}
