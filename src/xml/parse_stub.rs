pub fn parse_thread_xml(_t: &str) -> Result<Vec<crate::event::AgentEvent>, String> { Ok(vec![]) }
