import Foundation

extension RFC9111 {
    /// The primary cache key (RFC 9111 §2): `"<METHOD> <normalised target URI>"`.
    ///
    /// The method is kept byte-exact (methods are case-sensitive, RFC 9110 §9.1). See ``normalizedURI(_:)``.
    public static func primaryKey(method: String, url: URL) -> String {
        method + " " + normalizedURI(url)
    }

    /// The primary keys to look up for `request`, most specific first: a HEAD request can also be answered from
    /// a stored GET response (§4.1), so HEAD yields `[HEAD key, GET key]`; other methods one key.
    public static func lookupKeys(for request: CacheRequest) -> [String] {
        if request.method == "HEAD" {
            return [primaryKey(method: "HEAD", url: request.url), primaryKey(method: "GET", url: request.url)]
        }
        return [primaryKey(method: request.method, url: request.url)]
    }

    /// The target URI normalised without changing its meaning (RFC 9110 §4.2.3, RFC 3986 §6.2.2–6.2.3).
    ///
    /// Scheme and host are lower-cased, the scheme's default port (http 80, https 443) is dropped, an empty
    /// path becomes `/`, the fragment is removed, http(s) user info (credentials, RFC 9110 §4.2.4) is removed;
    /// path and query are kept byte-exact (paths are case-sensitive and `%7E` is not rewritten). URLs Foundation cannot decompose keep their string minus fragment.
    public static func normalizedURI(_ url: URL) -> String {
        normalizedURI(string: url.absoluteString)
    }

    /// ``normalizedURI(_:)`` on the text of an absolute URI (RFC 3986 §3 syntax, scanned byte by byte).
    static func normalizedURI(string text: String) -> String {
        let uri = stripFragment(text)
        let utf8 = uri.utf8
        guard let colon = utf8.firstIndex(of: 0x3A),
              uri[colon...].hasPrefix("://") else { return uri }
        let scheme = HeaderSyntax.asciiLowercased(uri[..<colon])
        let authorityStart = utf8.index(colon, offsetBy: 3)
        let authorityEnd = utf8[authorityStart...].firstIndex { $0 == 0x2F || $0 == 0x3F } ?? utf8.endIndex
        var hostStart = authorityStart
        var out = scheme + "://"
        if let at = utf8[authorityStart..<authorityEnd].lastIndex(of: 0x40) {
            // http(s) user info is credentials, not part of the resource's identity (RFC 9110 §4.2.4 deprecates
            // it): it never enters a key, so no password is written into the index. Other schemes keep it.
            if scheme != "http" && scheme != "https" { out += uri[authorityStart...at] }
            hostStart = utf8.index(after: at)
        }
        // The port separator is the last ':' after any IPv6 literal's closing bracket.
        let bracket = utf8[hostStart..<authorityEnd].lastIndex(of: 0x5D)
        let portSearchStart = bracket.map { utf8.index(after: $0) } ?? hostStart
        let portColon = utf8[portSearchStart..<authorityEnd].lastIndex(of: 0x3A)
        out += HeaderSyntax.asciiLowercased(uri[hostStart..<(portColon ?? authorityEnd)])
        if let portColon {
            let portText = uri[utf8.index(after: portColon)..<authorityEnd]
            if let port = HeaderSyntax.deltaSeconds(portText) {
                if !isDefaultPort(port, scheme: scheme) { out += ":\(port)" }
            } else if !portText.isEmpty {
                out += ":" + portText
            }
        }
        let rest = uri[authorityEnd...]
        if (rest.isEmpty || rest.utf8.first == 0x3F) && (scheme == "http" || scheme == "https") { out += "/" }
        out += rest
        return out
    }

    private static func isDefaultPort(_ port: Int, scheme: String) -> Bool {
        (scheme == "http" && port == 80) || (scheme == "https" && port == 443)
    }

    private static func stripFragment(_ text: String) -> String {
        guard let hash = text.utf8.firstIndex(of: 0x23) else { return text }
        return String(text[..<hash])
    }

    /// The secondary key (RFC 9111 §4.1): the request's values of the fields the stored response's `Vary`
    /// names, normalised; `""` when there is no `Vary`; `nil` when `Vary` contains `*` (never matches).
    ///
    /// Field names are compared case-insensitively and sorted; each value is split into list members, trimmed,
    /// inner whitespace collapsed, and re-joined with `,`. An absent field differs from an empty one. Values of
    /// ``credentialFields`` (Authorization, Proxy-Authorization, Cookie) appear only as `secret`'s keyed hash.
    /// - Parameters:
    ///   - vary: the stored response's header fields (only `Vary` is read).
    ///   - request: the request header fields (the presented request, or the stored varying headers).
    ///   - secret: the namespace's key for hashing credential values (``CacheKeySecret``).
    public static func secondaryKey(vary: HTTPHeaders, request: HTTPHeaders, secret: CacheKeySecret = .none) -> String? {
        secondaryKey(vary: vary) { name, values in storedValue(name: name, values: values, secret: secret) }
            .map { $0(request) }
    }

    /// The store's variant key of a stored response (``variantKey(secondaryKey:credentialPartition:)``), from its
    /// own stored varying headers (whose credential values already are keyed hashes) and its credential partition;
    /// `nil` when its `Vary` contains `*`. Equals the key it was stored under.
    public static func variantKey(of stored: StoredResponse) -> String? {
        guard let key = secondaryKey(vary: stored.response.headers, value: { name, values in
            normalizedValue(values, name: HeaderSyntax.asciiLowercased(name)) })
            .map({ $0(stored.varyingRequestHeaders) }) else { return nil }
        return variantKey(secondaryKey: key, credentialPartition: stored.credentialPartition)
    }

    /// The secondary key builder for `vary`'s field names, with `value` making each present field's stored value.
    private static func secondaryKey(vary: HTTPHeaders, value: @escaping (String, [String]) -> String) -> ((HTTPHeaders) -> String)? {
        guard let names = HeaderSyntax.varyFieldNames(vary) else { return nil }
        let sorted = names.sorted()
        return { request in
            sorted.map { name -> String in
                let values = request.values(for: name)
                if values.isEmpty { return escape(name) }
                return escape(name) + ":" + escape(value(name, values))
            }.joined(separator: "\n")
        }
    }

    /// The value kept in a stored key for the request field `name`: its normalised value, or for a credential
    /// field (``credentialFields``) the keyed hash of it.
    static func storedValue(name: String, values: [String], secret: CacheKeySecret) -> String {
        let value = normalizedValue(values, name: HeaderSyntax.asciiLowercased(name))
        return isCredentialField(name) ? secret.storedTag(value) : value
    }

    /// Whether `value` has the shape of ``CacheKeySecret/tag(_:)``'s output.
    static func isKeyedTag(_ value: String) -> Bool {
        value.hasPrefix(CacheKeySecret.tagPrefix) && value.utf8.count == CacheKeySecret.tagPrefix.utf8.count + 64
    }

    /// All lines of one request field as one normalised list: members trimmed, inner whitespace collapsed, `,`-joined;
    /// `Accept-Language` (`name`, lower-cased) also without order and case (``normalizedAcceptLanguage(_:)``).
    static func normalizedValue(_ values: [String], name: String = "") -> String {
        if name == "accept-language", let language = normalizedAcceptLanguage(values) { return language }
        var members: [String] = []
        for value in values {
            HeaderSyntax.forEachMember(value) { members.append(HeaderSyntax.collapseWhitespace($0)) }
        }
        return members.joined(separator: ",")
    }

    /// Whether the stored varying headers `stored` and the presented request `request` agree on every field in
    /// `names` (§4.1), exactly as equal ``secondaryKey(vary:request:secret:)``s; credential fields are compared
    /// by keyed hash (the stored side holds only the hash). With `storedResponse`, an `Accept-Language` that
    /// differs still matches when it would select the stored response's `Content-Language`
    /// (``selectsStoredLanguage(storedResponse:requestValues:)``).
    static func varyValuesMatch(_ names: [String], _ stored: HTTPHeaders, _ request: HTTPHeaders,
                                storedResponse: HTTPHeaders? = nil, secret: CacheKeySecret = .none) -> Bool {
        for name in names {
            let left = stored.values(for: name), right = request.values(for: name)
            if left.isEmpty || right.isEmpty {
                if left.isEmpty && right.isEmpty { continue }
                return false
            }
            if isCredentialField(name) {
                // The stored side must be a keyed hash: a plaintext credential in stored metadata never matches.
                guard left.count == 1, isKeyedTag(left[0]), let tag = secret.tag(normalizedValue(right)),
                      left[0] == tag else { return false }
                continue
            }
            if left == right { continue }
            if normalizedValue(left, name: name) != normalizedValue(right, name: name) {
                if name == "accept-language", let storedResponse,
                   selectsStoredLanguage(storedResponse: storedResponse, requestValues: right) { continue }
                return false
            }
        }
        return true
    }

    /// The first content coding of the stored response's `Content-Encoding` that the request's `Accept-Encoding`
    /// does not accept, or `nil` when all are accepted (an identity-coded response always is).
    ///
    /// An implicit secondary key on `Accept-Encoding` (RFC 9111 §4.1 lets a cache decline a stored response),
    /// applied to a coded response stored for a request that carried `Accept-Encoding`
    /// (``varyingRequestHeaders(response:request:secret:)`` keeps that field then): origins often send a coded
    /// response without `Vary: Accept-Encoding`. A request without `Accept-Encoding` asks for identity here, as
    /// the transports send none (or `identity`) and decode nothing, so such a response is never selected for it;
    /// a coded response an origin sent unasked is selected as stored. Codings compare case-insensitively; `x-gzip` is `gzip` (RFC 9110 §8.4.1.3).
    static func unacceptedContentCoding(stored response: HTTPHeaders, request: HTTPHeaders) -> String? {
        let codings = HeaderSyntax.listMembers(of: response, named: "Content-Encoding")
            .map { canonicalCoding(HeaderSyntax.asciiLowercased($0)) }
            .filter { $0 != "identity" }
        guard !codings.isEmpty else { return nil }
        var weights: [String: Bool] = [:]   // coding → acceptable (q > 0)
        for member in HeaderSyntax.listMembers(of: request, named: "Accept-Encoding") {
            let parts = member.split(separator: ";", omittingEmptySubsequences: false)
            let name = canonicalCoding(HeaderSyntax.asciiLowercased(parts[0].trimmingCharacters(in: .whitespaces)))
            var acceptable = true
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "q" else { continue }
                acceptable = (Double(pair[1].trimmingCharacters(in: .whitespaces)) ?? 1) > 0
            }
            weights[name] = acceptable
        }
        for coding in codings where !(weights[coding] ?? weights["*"] ?? false) { return coding }
        return nil
    }

    private static func canonicalCoding(_ coding: String) -> String {
        switch coding {
        case "x-gzip": "gzip"
        case "x-compress": "compress"
        default: coding
        }
    }

    private static func escape(_ text: String) -> String {
        guard text.contains(where: { $0 == "\\" || $0 == "\n" || $0 == ":" || $0 == "\r" }) else { return text }
        var out = ""
        for ch in text {
            switch ch {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case ":": out += "\\c"
            default: out.append(ch)
            }
        }
        return out
    }

    /// The request header lines named by the response's `Vary`, to store with the response (§4.1), plus
    /// `Accept-Encoding` when the response has a non-identity `Content-Encoding`; empty when `Vary` is `*`. A credential field (``credentialFields``) is kept as one line carrying
    /// `secret`'s keyed hash of its normalised value, never in plaintext.
    public static func varyingRequestHeaders(response: CacheResponse, request: HTTPHeaders,
                                             secret: CacheKeySecret = .none) -> HTTPHeaders {
        guard var names = HeaderSyntax.varyFieldNames(response.headers) else { return [] }
        // A coded response keeps the Accept-Encoding it was negotiated for, Vary or not (unacceptedContentCoding).
        if HeaderSyntax.listMembers(of: response.headers, named: "Content-Encoding").contains(where: {
            HeaderSyntax.asciiLowercased($0) != "identity" }),
           !names.contains(where: { HTTPHeaders.namesEqual($0, "Accept-Encoding") }) {
            names.append("accept-encoding")
        }
        var fields: [HTTPHeaders.Field] = []
        var hashed: Set<String> = []
        for field in request.fields where names.contains(where: { HTTPHeaders.namesEqual($0, field.name) }) {
            guard isCredentialField(field.name) else {
                fields.append(field)
                continue
            }
            let lower = HeaderSyntax.asciiLowercased(field.name)
            guard hashed.insert(lower).inserted else { continue }
            let values = request.values(for: field.name)
            fields.append(HTTPHeaders.Field(name: field.name, value: storedValue(name: field.name, values: values, secret: secret)))
        }
        return HTTPHeaders(fields: fields)
    }

    /// Whether `stored` may answer `request` as far as §4.1 goes beyond the URI: the stored request method
    /// allows it (same method, or a GET response for a HEAD request), the request presents the credentials the
    /// response was stored for (``StoredResponse/credentialPartition``, §3.5), the request's `Accept-Encoding`
    /// accepts the stored `Content-Encoding` (``unacceptedContentCoding(stored:request:)``, also without `Vary`)
    /// and the `Vary`-named request fields match.
    ///
    /// The target URI is matched by the primary-key lookup (``primaryKey(method:url:)``), not here. `secret` must
    /// be the one the response was stored with.
    public static func matches(stored: StoredResponse, request: CacheRequest, secret: CacheKeySecret = .none) -> Bool {
        mismatchReason(stored: stored, request: request, secret: secret) == nil
    }

    /// Why `stored` does not match `request` (§4.1, §3.5), or `nil` when it matches.
    static func mismatchReason(stored: StoredResponse, request: CacheRequest, secret: CacheKeySecret) -> String? {
        let methodOK = stored.requestMethod == request.method || (request.method == "HEAD" && stored.requestMethod == "GET")
        if !methodOK { return "stored response was for \(stored.requestMethod), request is \(request.method) (RFC 9111 §4.1)" }
        if let partition = stored.credentialPartition,
           partition == CacheKeySecret.unavailableTag || partition != requestPartition(request, secret: secret) {
            return "stored response was obtained with other credentials than the request's (RFC 9111 §3.5)"
        }
        if stored.varyingRequestHeaders.contains("Accept-Encoding"),
           let coding = unacceptedContentCoding(stored: stored.response.headers, request: request.headers) {
            return "stored response has Content-Encoding \(coding), which the request's Accept-Encoding does not accept (RFC 9110 §12.5.3, RFC 9111 §4.1)"
        }
        guard stored.response.headers.contains("Vary") else { return nil }
        guard let names = HeaderSyntax.varyFieldNames(stored.response.headers) else {
            return "stored response has Vary: *, which never matches (RFC 9111 §4.1)"
        }
        guard varyValuesMatch(names, stored.varyingRequestHeaders, request.headers, storedResponse: stored.response.headers,
                              secret: secret) else {
            return "request's values of Vary fields (\(names.joined(separator: ", "))) differ from the stored request's (RFC 9111 §4.1)"
        }
        return nil
    }
}
