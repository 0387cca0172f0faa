import Foundation
import Testing

/// The module diagram at the top of Package.swift against the dependencies the targets declare
/// (`swift package dump-package`), so that the diagram cannot drift from the package again:
/// every arrow it draws is a declared dependency, every declared dependency between modules it
/// names is a path along its arrows, and every Swift module of Sources is in it (VTCore and
/// VTH264, which every module or every H.264 one rests on, are named in its prose).
@Suite struct PackageDiagramTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The modules the prose below the diagram names instead of drawing.
    static let beneathTheDiagram: Set<String> = ["VTCore", "VTH264"]

    /// The diagram's arrows: a branch (`├─▶ B`, `└─▶ B`) from the node it hangs under, and an
    /// arrow at a line's end (`A (...) ─▶ B`) from that line's node.
    static func diagramEdges(_ manifest: String) -> [(from: String, to: String)] {
        let lines = manifest.split(separator: "\n", omittingEmptySubsequences: false)
            .prefix { !$0.hasPrefix("let package") }
            .filter { $0.hasPrefix("//") }
            .map { String($0.dropFirst(2)) }
        var edges: [(String, String)] = []
        // The node last seen at each column where a name begins.
        var parents: [(column: Int, name: String)] = []
        let name = /[A-Za-z][A-Za-z0-9]*/
        let arrow = /─▶ ([A-Za-z][A-Za-z0-9]*)/
        for line in lines {
            let characters = Array(line)
            // Where the line's text begins: after the tree's drawing characters.
            guard let start = characters.firstIndex(where: { $0.isLetter }),
                  characters[..<start].allSatisfy({ " │├└─▶".contains($0) }) else { continue }
            let rest = String(characters[start...])
            let node = rest.prefixMatch(of: name).map { String($0.output) }.flatMap { $0.hasPrefix("VT") || $0 == "vtrecord" ? $0 : nil }
            if let node {
                parents.removeAll { $0.column >= start }
                if characters[..<start].contains("▶"), let parent = parents.last { edges.append((parent.name, node)) }
                parents.append((start, node))
            }
            // Arrows at the line's end ("... ─▶ VTFFmpeg"), on its node's line or the line that
            // goes on with that node's description.
            guard let from = node ?? parents.last?.name else { continue }
            for match in rest.matches(of: arrow) { edges.append((from, String(match.output.1))) }
        }
        return edges
    }

    /// The package's targets and what each depends on: targets by name, other packages'
    /// products as `product:NAME`.
    static func declaredDependencies(of package: URL = root) throws -> (swiftModules: Set<String>, dependencies: [String: Set<String>]) {
        let dump = try Tools.run("swift", ["package", "--package-path", package.path, "--ignore-lock", "dump-package"])
        try #require(dump.status == 0, "swift package dump-package: \(dump.stderr)")
        let package = try #require(try JSONSerialization.jsonObject(with: dump.stdout) as? [String: Any])
        var modules = Set<String>()
        var dependencies: [String: Set<String>] = [:]
        for target in package["targets"] as? [[String: Any]] ?? [] {
            guard let name = target["name"] as? String, let type = target["type"] as? String else { continue }
            // Test helpers (VTTestSupport, under Tests/) are not modules of the program.
            let inSources = (target["path"] as? String).map { !$0.hasPrefix("Tests") } ?? true
            if ["regular", "executable"].contains(type), inSources, name.hasPrefix("VT") || name == "vtrecord" {
                modules.insert(name)
            }
            var names = Set<String>()
            for dependency in target["dependencies"] as? [[String: Any]] ?? [] {
                // {"byName": ["VTCore", null]}, {"target": [...]} or {"product": ["Logging", "swift-log", …]}.
                if let byName = (dependency["byName"] ?? dependency["target"]) as? [Any], let first = byName.first as? String {
                    names.insert(first)
                } else if let product = dependency["product"] as? [Any], let first = product.first as? String {
                    names.insert("product:\(first)")
                }
            }
            dependencies[name] = names
        }
        return (modules, dependencies)
    }

    @Test func theDiagramIsThePackagesDependencies() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let edges = Self.diagramEdges(manifest)
        try #require(edges.count >= 10, "the diagram did not read: \(edges)")
        let (modules, declared) = try Self.declaredDependencies()
        let drawn = Set(edges.flatMap { [$0.from, $0.to] })

        // Every arrow is a declared dependency.
        for edge in edges {
            #expect(declared[edge.from]?.contains(edge.to) == true, "Package.swift's diagram draws \(edge.from) ─▶ \(edge.to), which its targets do not declare")
        }
        // Every module is in the diagram or named beneath it.
        for module in modules.subtracting(drawn).subtracting(Self.beneathTheDiagram) where module != "vtrecord-bench" {
            Issue.record("\(module) is a module of Sources that Package.swift's diagram does not show")
        }
        // Every declared dependency between drawn modules follows the arrows.
        var reach: [String: Set<String>] = [:]
        for edge in edges { reach[edge.from, default: []].insert(edge.to) }
        func reachable(_ from: String) -> Set<String> {
            var seen = Set<String>(), stack = [from]
            while let next = stack.popLast() {
                for to in reach[next] ?? [] where seen.insert(to).inserted { stack.append(to) }
            }
            return seen
        }
        for (module, dependencies) in declared where drawn.contains(module) {
            let paths = reachable(module)
            for dependency in dependencies where drawn.contains(dependency) && !paths.contains(dependency) {
                Issue.record("\(module) depends on \(dependency), which Package.swift's diagram does not show below it")
            }
        }
    }

    /// make fuzz builds the modules in a package of its own (Fuzz/Package.swift: libFuzzer's
    /// targets link only with --sanitize=fuzzer), whose targets are the root's source folders
    /// linked under Fuzz/Sources. Each must declare what the root declares, and what it needs
    /// must be there too, or make fuzz stops building when a module gains a dependency.
    @Test func theFuzzPackageMirrorsTheModules() throws {
        let (_, root) = try Self.declaredDependencies()
        let fuzzPackage = Self.root.appendingPathComponent("Fuzz")
        let (_, fuzz) = try Self.declaredDependencies(of: fuzzPackage)
        let mirrored = fuzz.keys.filter { root[$0] != nil }
        try #require(mirrored.contains("vtrecord") && mirrored.contains("VTH264"), "\(fuzz.keys.sorted())")
        for name in mirrored {
            #expect(fuzz[name] == root[name],
                    "Fuzz/Package.swift's \(name) depends on \(fuzz[name]!.sorted()), the root's on \(root[name]!.sorted())")
            for dependency in root[name]! where !dependency.hasPrefix("product:") && fuzz[dependency] == nil {
                Issue.record("Fuzz/Package.swift has no \(dependency), which \(name) depends on")
            }
            let folder = fuzzPackage.appendingPathComponent("Sources/\(name)").resolvingSymlinksInPath()
            #expect(folder.path == Self.root.appendingPathComponent("Sources/\(name)").resolvingSymlinksInPath().path,
                    "Fuzz/Sources/\(name) is not a link to Sources/\(name)")
        }
    }

    /// The reading of the diagram itself, on a small one with both kinds of arrow.
    @Test func aDiagramReadsAsItsArrows() {
        let manifest = """
            // The modules:
            //
            //   vtrecord (CLI)
            //     ├─▶ VTRecorder (the pipeline)
            //     │     ├─▶ VTCapture (V4L2)
            //     │     └─▶ VTOutput (writers, segments,
            //     │           fan-out) ─▶ VTFFmpeg
            //     └─▶ VTDecoding (decode)
            //           └─▶ VTReading (read) ─▶ VTFFmpeg
            //
            // Every module rests on VTCore.
            let package = Package(
            """
        let edges = Self.diagramEdges(manifest).map { "\($0.from)>\($0.to)" }
        #expect(edges == ["vtrecord>VTRecorder", "VTRecorder>VTCapture", "VTRecorder>VTOutput", "VTOutput>VTFFmpeg",
                          "vtrecord>VTDecoding", "VTDecoding>VTReading", "VTReading>VTFFmpeg"])
    }
}
