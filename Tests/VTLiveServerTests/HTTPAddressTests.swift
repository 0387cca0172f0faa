import Testing
import VTLiveServer

@Suite struct HTTPAddressTests {
    @Test func aLonePortListensOnLoopbackOnly() throws {
        let address = try #require(HTTPAddress("8080"))
        #expect(address.host == "127.0.0.1" && address.port == 8080 && address.isLoopback)
        #expect(try #require(HTTPAddress(":8080")).host == "0.0.0.0")
        #expect(try #require(HTTPAddress("[::1]:9")).description == "[::1]:9")
        #expect(HTTPAddress("host:99999") == nil)
        #expect(HTTPAddress("a:b:c") == nil)
    }
}
