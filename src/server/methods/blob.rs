//! The blob methods: `blob/put`, `blob/get`, `blob/stat`.

use crate::media::bytes::to_base64;
use crate::media::BlobInfo;
use crate::server::errors::from_service;
use crate::server::table::{MethodTable, Policy};
use crate::server::wire::parse;
use jsonrpsee::types::ErrorObjectOwned;
use serde::Deserialize;
use serde_json::{json, Map, Value};

type RpcResult<T> = Result<T, ErrorObjectOwned>;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PutParams {
    data: String,
    media_type: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct BlobParams {
    blob: String,
}

pub(super) fn register(m: &mut MethodTable) {
    m.register("blob/put", Policy::SERVICE_WRITE, |params, ctx| async move {
        let p: PutParams = parse(&params)?;
        let info = ctx.service.put_blob(&p.data, p.media_type.as_deref()).await.map_err(from_service)?;
        RpcResult::Ok(Value::Object(info_fields(&info)))
    });

    m.register("blob/get", Policy::SERVICE_READ, |params, ctx| async move {
        let p: BlobParams = parse(&params)?;
        let blob = ctx.service.blob(&p.blob).await.map_err(from_service)?;
        let mut fields = info_fields(&blob.info);
        fields.insert("data".into(), Value::String(to_base64(&blob.bytes)));
        RpcResult::Ok(Value::Object(fields))
    });

    m.register("blob/stat", Policy::SERVICE_READ, |params, ctx| async move {
        let p: BlobParams = parse(&params)?;
        let info = ctx.service.blob_info(&p.blob).await.map_err(from_service)?;
        RpcResult::Ok(Value::Object(info_fields(&info)))
    });
}

/// `{blob, mediaType, size, width?, height?}`.
fn info_fields(info: &BlobInfo) -> Map<String, Value> {
    let mut fields = match json!({"blob": info.id.as_str(), "mediaType": info.media_type, "size": info.size}) {
        Value::Object(fields) => fields,
        _ => unreachable!("an object literal"),
    };
    if let Some((width, height)) = info.dimensions {
        fields.insert("width".into(), Value::from(width));
        fields.insert("height".into(), Value::from(height));
    }
    fields
}
