//! Certificates made by the tests (rcgen): a certificate authority per
//! test, server certificates for `localhost`, and client certificates,
//! written as PEM files the server and clients read.

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

/// A certificate and its private key, as PEM files.
#[derive(Clone, Debug)]
pub struct Pem {
    pub cert: PathBuf,
    pub key: PathBuf,
}

impl Pem {
    pub fn cert_pem(&self) -> String {
        std::fs::read_to_string(&self.cert).unwrap()
    }

    pub fn key_pem(&self) -> String {
        std::fs::read_to_string(&self.key).unwrap()
    }
}

/// A certificate authority that issues certificates into a folder.
pub struct Authority {
    issuer: CertifiedIssuer<'static, KeyPair>,
    dir: PathBuf,
    name: String,
    /// Its own certificate (PEM), the file clients and servers trust.
    pub cert: PathBuf,
}

impl Authority {
    /// A new self-signed CA named `name`, writing its files into `dir`.
    pub fn new(dir: &Path, name: &str) -> Authority {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let issuer = CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap();
        let cert = dir.join(format!("{name}-ca.crt"));
        std::fs::write(&cert, issuer.pem()).unwrap();
        Authority {
            issuer,
            dir: dir.to_path_buf(),
            name: name.to_string(),
            cert,
        }
    }

    /// A server certificate for `localhost` and 127.0.0.1.
    pub fn server(&self, file: &str) -> Pem {
        self.issue(
            file,
            vec!["localhost".into(), "127.0.0.1".into()],
            ExtendedKeyUsagePurpose::ServerAuth,
        )
    }

    /// A client certificate (the name is only its common name).
    pub fn client(&self, file: &str) -> Pem {
        self.issue(file, Vec::new(), ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn issue(&self, file: &str, names: Vec<String>, usage: ExtendedKeyUsagePurpose) -> Pem {
        let mut params = CertificateParams::new(names).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, format!("{file} ({})", self.name));
        params.use_authority_key_identifier_extension = true;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        let pem = Pem {
            cert: self.dir.join(format!("{file}.crt")),
            key: self.dir.join(format!("{file}.key")),
        };
        std::fs::write(&pem.cert, cert.pem()).unwrap();
        std::fs::write(&pem.key, key.serialize_pem()).unwrap();
        pem
    }
}

/// A self-signed server certificate for `localhost` and 127.0.0.1 (no CA).
pub fn self_signed_server(dir: &Path, file: &str) -> Pem {
    let rcgen::CertifiedKey { cert, signing_key } =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .unwrap();
    let pem = Pem {
        cert: dir.join(format!("{file}.crt")),
        key: dir.join(format!("{file}.key")),
    };
    std::fs::write(&pem.cert, cert.pem()).unwrap();
    std::fs::write(&pem.key, signing_key.serialize_pem()).unwrap();
    pem
}
